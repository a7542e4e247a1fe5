import CheckmarkCore
import CheckmarkWire

/// An event line of a trace: the event as shared by its recipients (counts left out), and either
/// its recipient connections with their counts (recorded live) or its audience (from a journal).
package struct TraceEvent: Sendable, Hashable {
    /// The `seq` of the command line that produced it.
    package var commandSeq: Int64
    package var type: String
    package var cid: ChannelCID?
    package var channelSeq: Int64?
    package var audience: EventAudience?
    package var recipients: [TracedRecipient]?
    /// The event's JSON without per-recipient counts.
    package var json: [UInt8]

    package init(commandSeq: Int64, type: String, cid: ChannelCID?, channelSeq: Int64?, audience: EventAudience?,
                recipients: [TracedRecipient]?, json: [UInt8]) {
        self.commandSeq = commandSeq
        self.type = type
        self.cid = cid
        self.channelSeq = channelSeq
        self.audience = audience
        self.recipients = recipients
        self.json = json
    }

    /// The JSON one recipient received: the shared object with that recipient's counts.
    package func json(for counts: UnreadCounts?) -> [UInt8] {
        EncodedEvent(stored: json, type: type).json(for: counts)
    }
}
