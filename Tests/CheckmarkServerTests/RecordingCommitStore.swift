import CheckmarkCore
import CheckmarkStorage
import NIOConcurrencyHelpers

/// The real SQLite store, keeping a copy of every journal entry committed through it: what the service
/// hands storage, as storage receives it.
final class RecordingCommitStore: ReceiptsStore, Sendable {
    let store: SQLiteStore
    private let committed = NIOLockedValueBox<[JournalEntry]>([])

    init(_ store: SQLiteStore) { self.store = store }

    var entries: [JournalEntry] { committed.withLockedValue { $0 } }

    func commit(_ batch: CommitBatch) throws(StorageError) {
        try store.commit(batch)
        committed.withLockedValue { $0 += batch.entries }
    }

    func load(messageWindow: Int) throws(StorageError) -> StoredState { try store.load(messageWindow: messageWindow) }
    func archivedTexts(_ cid: ChannelCID, positions: [Int]) throws(StorageError) -> [Int: String] {
        try store.archivedTexts(cid, positions: positions)
    }
    func journal(after seq: Int64, limit: Int) throws(StorageError) -> [JournalEntry] { try store.journal(after: seq, limit: limit) }
    func channelEvents(_ cid: ChannelCID, after: Int64, through: Int64, limit: Int, maxBytes: Int) throws(StorageError) -> [JournalEvent] {
        try store.channelEvents(cid, after: after, through: through, limit: limit, maxBytes: maxBytes)
    }
    func prune(_ policy: RetentionPolicy, now: Timestamp, limit: Int) throws(StorageError) -> (entries: Int, events: Int) {
        try store.prune(policy, now: now, limit: limit)
    }
    var isReady: Bool { store.isReady }
    func close() { store.close() }
}
