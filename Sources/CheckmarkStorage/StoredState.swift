import CheckmarkCore

/// What storage loads at start-up: the durable state and where the journal's sequences stand.
public struct StoredState: Sendable {
    public var snapshot: ReceiptsSnapshot
    /// The last journal entry's sequence (0 for an empty journal).
    public var lastSeq: Int64
    /// The last journal event's sequence.
    public var lastEventSeq: Int64
    /// Each channel's last event sequence.
    public var channelSeqs: [ChannelCID: Int64]

    public init(snapshot: ReceiptsSnapshot, lastSeq: Int64, lastEventSeq: Int64, channelSeqs: [ChannelCID: Int64]) {
        self.snapshot = snapshot
        self.lastSeq = lastSeq
        self.lastEventSeq = lastEventSeq
        self.channelSeqs = channelSeqs
    }
}
