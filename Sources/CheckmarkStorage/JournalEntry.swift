import CheckmarkCore

/// One accepted command in the journal, with the events it produced. `seq` is the global sequence:
/// consecutive, starting at 1, no gaps.
public struct JournalEntry: Sendable, Hashable {
    public var seq: Int64
    /// When the core applied it.
    public var at: Timestamp
    public var command: ReceiptsCommand
    public var events: [JournalEvent]

    public init(seq: Int64, at: Timestamp, command: ReceiptsCommand, events: [JournalEvent]) {
        self.seq = seq
        self.at = at
        self.command = command
        self.events = events
    }
}

/// One event in the journal: its global event sequence, and for channel events the channel's own
/// sequence (consecutive per channel from 1), so a client can resume one channel from where it was.
public struct JournalEvent: Sendable, Hashable {
    public var seq: Int64
    public var cid: ChannelCID?
    public var channelSeq: Int64?
    public var type: String
    /// Who the event is for; nil for events journaled before the audience was kept (they cannot be
    /// resumed from).
    public var audience: EventAudience?
    /// The event's JSON as shared by all recipients (per-recipient counts left out).
    public var json: [UInt8]

    public init(seq: Int64, cid: ChannelCID?, channelSeq: Int64?, type: String, audience: EventAudience?, json: [UInt8]) {
        self.seq = seq
        self.cid = cid
        self.channelSeq = channelSeq
        self.type = type
        self.audience = audience
        self.json = json
    }
}
