import CheckmarkCore

/// One accepted command in the journal, with the events it produced. `seq` is the global sequence:
/// consecutive, starting at 1, no gaps.
package struct JournalEntry: Sendable, Hashable {
    package var seq: Int64
    /// When the core applied it.
    package var at: Timestamp
    package var command: ReceiptsCommand
    package var events: [JournalEvent]

    package init(seq: Int64, at: Timestamp, command: ReceiptsCommand, events: [JournalEvent]) {
        self.seq = seq
        self.at = at
        self.command = command
        self.events = events
    }
}

/// One event in the journal: its global event sequence, and for channel events the channel's own
/// sequence (consecutive per channel from 1), so a client can resume one channel from where it was.
package struct JournalEvent: Sendable, Hashable {
    package var seq: Int64
    package var cid: ChannelCID?
    package var channelSeq: Int64?
    package var type: String
    /// Who the event is for; nil for events journaled before the audience was kept (they cannot be
    /// resumed from).
    package var audience: EventAudience?
    /// The event's JSON as shared by all recipients (per-recipient counts left out); without its
    /// message object when read back with a ``message``.
    package var json: [UInt8]
    /// The message object kept once in storage instead of in ``json`` (``JournaledMessage``).
    package var message: JournaledMessage?

    package init(seq: Int64, cid: ChannelCID?, channelSeq: Int64?, type: String, audience: EventAudience?, json: [UInt8],
                 message: JournaledMessage? = nil) {
        self.seq = seq
        self.cid = cid
        self.channelSeq = channelSeq
        self.type = type
        self.audience = audience
        self.json = json
        self.message = message
    }

    /// The ``message`` the store keeps once: only where it is an event's message object going in
    /// (whole JSON, no message read back) of a channel event.
    var storedMessage: JournaledMessage? {
        guard let message, message.message == nil, cid != nil, message.fits(json) else { return nil }
        return message
    }
}
