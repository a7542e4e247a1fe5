import CheckmarkCore

/// What storage loads at start-up: the durable state and where the journal's sequences stand.
package struct StoredState: Sendable {
    package var snapshot: ReceiptsSnapshot
    /// The last journal entry's sequence (0 for an empty journal).
    package var lastSeq: Int64
    /// The last journal event's sequence.
    package var lastEventSeq: Int64
    /// Each channel's last event sequence.
    package var channelSeqs: [ChannelCID: Int64]
    /// Each journal stream's last number, by ``JournalStream/rawValue`` (0 for a stream without entries).
    package var streamSeqs: [Int64]
    /// How this node numbers the entries and events it commits, while this store's connection lasts.
    package var numbering = JournalNumbering.alone

    package init(snapshot: ReceiptsSnapshot, lastSeq: Int64, lastEventSeq: Int64, channelSeqs: [ChannelCID: Int64], streamSeqs: [Int64]) {
        self.snapshot = snapshot
        self.lastSeq = lastSeq
        self.lastEventSeq = lastEventSeq
        self.channelSeqs = channelSeqs
        self.streamSeqs = streamSeqs
    }
}
