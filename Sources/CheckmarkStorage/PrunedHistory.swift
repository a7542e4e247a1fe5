import CheckmarkCore

/// What retention removed from a journal: its oldest commands (those without an event left) and, per
/// channel, its oldest events.
/// An export of the journal says so instead of presenting what is left as the whole history.
package struct PrunedHistory: Sendable, Hashable {
    /// A channel whose events up to `throughChannelSeq` are gone.
    package struct ChannelEvents: Sendable, Hashable {
        package var cid: ChannelCID
        package var throughChannelSeq: Int64

        package init(cid: ChannelCID, throughChannelSeq: Int64) {
            self.cid = cid
            self.throughChannelSeq = throughChannelSeq
        }
    }

    /// Before this sequence the journal holds only the commands some of whose events it still has
    /// (none, once those are gone too); nil when no command is gone.
    package var commandsBefore: Int64?
    /// The channels some of whose events are gone, by cid.
    package var channels: [ChannelEvents]

    package init(commandsBefore: Int64? = nil, channels: [ChannelEvents] = []) {
        self.commandsBefore = commandsBefore
        self.channels = channels
    }

    /// Nothing was removed.
    package var isEmpty: Bool { commandsBefore == nil && channels.isEmpty }
}
