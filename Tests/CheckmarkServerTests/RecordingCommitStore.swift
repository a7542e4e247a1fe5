import CheckmarkCore
import CheckmarkStorage
import NIOConcurrencyHelpers

/// The real SQLite store, keeping a copy of every journal entry committed through it: what the service
/// hands storage, as storage receives it.
final class RecordingCommitStore: SQLiteStoreWrapper, Sendable {
    let store: SQLiteStore
    private let committed = NIOLockedValueBox<[JournalEntry]>([])

    init(_ store: SQLiteStore) { self.store = store }

    var entries: [JournalEntry] { committed.withLockedValue { $0 } }

    func commit(_ batch: CommitBatch) throws(StorageError) {
        try store.commit(batch)
        committed.withLockedValue { $0 += batch.entries }
    }
}
