import CheckmarkCore

/// Durable storage of receipts state and its journal. The SQLite store is the single-node default; a
/// PostgreSQL store implements the same contract for clusters. Calls are blocking and made from one
/// writer thread at a time.
package protocol ReceiptsStore: AnyObject, Sendable {
    /// Reads the whole durable state, holding the texts of each channel's newest `messageWindow`
    /// messages only (the others archived: ``MessageLog``).
    func load(messageWindow: Int) throws(StorageError) -> StoredState
    /// Reads the durable state with every channel left dormant (``DormantChannel``): users, types,
    /// each channel's fields and newest message, its members' pointers and counts, and who has unread
    /// replies; no message, pointer pass or thread is read. What a start needs, in a time that grows
    /// with channels and members, not with history.
    func loadDormant() throws(StorageError) -> StoredState
    /// One channel whole, as ``load(messageWindow:)`` gives it, or nil when storage has no such channel.
    /// Like ``archivedTexts(_:positions:)``, this may come from any thread: it reads committed data
    /// on the reader's connection. The channel must not change meanwhile (a dormant one does not).
    func loadChannel(_ cid: ChannelCID, messageWindow: Int) throws(StorageError) -> Channel?
    /// The channels `cids` went dormant again (``ReceiptsEngine/evict(_:)``) with nothing of theirs
    /// waiting for a commit: storage may forget what it kept of them for writing, since their next
    /// ``loadChannel(_:messageWindow:)`` tells it again. Call it on the thread that loads channels,
    /// so that it comes before their next load.
    func unloaded(_ cids: [ChannelCID])
    /// Writes one batch in one transaction; returns only when it is durable.
    /// - Throws: ``StorageError/commitFailed(reason:)``: nothing of the batch was written.
    func commit(_ batch: CommitBatch) throws(StorageError)
    /// Journal entries with `seq > after`, oldest first, at most `limit`.
    func journal(after seq: Int64, limit: Int) throws(StorageError) -> [JournalEntry]
    /// The journal events of one channel with `after < channel_seq <= through`, oldest first: at most
    /// `limit` of them, whose JSON is at most `maxBytes` in all (a first event larger than that comes
    /// alone, so that a page always moves on). Events the retention policy removed are
    /// simply absent: the caller checks that the sequences are consecutive. Unlike every other call,
    /// this one may come from any thread, at the same time as the writer's: it reads committed data
    /// on a connection of its own and never waits for a commit, nor makes one wait.
    func channelEvents(_ cid: ChannelCID, after: Int64, through: Int64, limit: Int, maxBytes: Int) throws(StorageError) -> [JournalEvent]
    /// The texts of the messages at `positions` of `cid`, by position (positions with no message are
    /// absent). Like ``channelEvents(_:after:through:limit:maxBytes:)``, this may come from any
    /// thread: it reads committed data on the reader's connection.
    func archivedTexts(_ cid: ChannelCID, positions: [Int]) throws(StorageError) -> [Int: String]
    /// The channels holding a message of this id (message ids are unique within a channel), in cid
    /// order: one look-up of the messages' id index (schema v9), for channels not in memory. Like
    /// ``archivedTexts(_:positions:)``, this may come from any thread: it reads committed data on the
    /// reader's connection.
    func channels(holdingMessage id: String) throws(StorageError) -> [ChannelCID]
    /// Removes the oldest journal history the policy no longer keeps: about `limit` rows at most
    /// (entries and events together; an entry's events go with it), so call again while it removes
    /// that many.
    /// - Returns: how many entries and events were removed.
    func prune(_ policy: RetentionPolicy, now: Timestamp, limit: Int) throws(StorageError) -> (entries: Int, events: Int)
    /// Whether storage is open and accepting commits.
    var isReady: Bool { get }
    /// Closes the database; later calls throw ``StorageError/closed``.
    func close()
}

extension ReceiptsStore {
    /// The whole durable state, every text held.
    package func load() throws(StorageError) -> StoredState {
        try load(messageWindow: .max)
    }

    /// Every journal event of one channel with `after < channel_seq <= through`, oldest first.
    package func channelEvents(_ cid: ChannelCID, after: Int64, through: Int64) throws(StorageError) -> [JournalEvent] {
        try channelEvents(cid, after: after, through: through, limit: .max, maxBytes: .max)
    }
}
