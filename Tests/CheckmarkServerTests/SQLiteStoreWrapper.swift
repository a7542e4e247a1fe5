import CheckmarkCore
import CheckmarkStorage

/// A test store around the real SQLite store that changes only how it commits: everything else is
/// the SQLite store's own.
protocol SQLiteStoreWrapper: ReceiptsStore {
    var store: SQLiteStore { get }
}

extension SQLiteStoreWrapper {
    func load(messageWindow: Int) throws(StorageError) -> StoredState { try store.load(messageWindow: messageWindow) }
    func loadDormant() throws(StorageError) -> StoredState { try store.loadDormant() }
    func loadChannel(_ cid: ChannelCID, messageWindow: Int) throws(StorageError) -> Channel? {
        try store.loadChannel(cid, messageWindow: messageWindow)
    }
    func unloaded(_ cids: [ChannelCID]) { store.unloaded(cids) }
    func archivedTexts(_ cid: ChannelCID, positions: [Int]) throws(StorageError) -> [Int: String] {
        try store.archivedTexts(cid, positions: positions)
    }
    func channels(holdingMessage id: String) throws(StorageError) -> [ChannelCID] { try store.channels(holdingMessage: id) }
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
