@testable import CheckmarkStorage
import CheckmarkCore
import Testing

/// The embedded database's page cache: large enough by default that a batch's changed pages stay in
/// it until the commit, and sized by `sqlite_cache` otherwise.
@Suite("SQLite page cache")
struct SQLitePageCacheTests {
    @Test func theStoresConnectionRunsWithTheDefaultCacheNotSQLitesTwoMegabytes() throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let store = try SQLiteStore(directory: try DataDirectory(path: temporary.path))
        defer { store.close() }
        #expect(try store.cacheBytes == SQLiteStore.defaultCacheBytes)
    }

    /// Issue 44: start-up reads every page of the state once; it must not leave the configured
    /// cache full of history (16 MiB of a 95 MiB database in the bench's restart), and the cache is
    /// the configured one again after.
    @Test func loadingTheStateDoesNotFillTheCache() throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let cid = ChannelCID(type: "messaging", id: "history")
        do {
            let store = try SQLiteStore(directory: try DataDirectory(path: temporary.path))
            defer { store.close() }
            var engine = ReceiptsEngine()
            var seq: Int64 = 0
            let text = String(repeating: "x", count: 2_000)
            try StorageRoundTripTests.applyAndCommit(
                [.upsertUser(User(id: "ann")), .createChannel(cid: cid, createdBy: "ann", members: ["ann"])]
                    + (0..<2_000).map { .sendMessage(cid: cid, userID: "ann", draft: MessageDraft(id: "m\($0)", text: text)) },
                to: store, engine: &engine, seq: &seq)
        }
        let store = try SQLiteStore(directory: try DataDirectory(path: temporary.path))
        defer { store.close() }
        #expect(try store.load().snapshot.channels.first?.messages.count == 2_000)
        let cached = store.cacheUsedBytes
        #expect(cached <= Self.releasedCacheBytes, "\(cached) bytes cached")
        #expect(try store.cacheBytes == SQLiteStore.defaultCacheBytes)
    }

    /// What a released cache may still hold (SQLite's bookkeeping, no pages of history).
    static let releasedCacheBytes = 64 * 1024

    /// Issue 44: a dormant start reads a thousand channels' members and newest messages; their pages
    /// are given back once the state is built (they held about 0.5 MiB of a restart's 4 MiB above an
    /// empty server's), and the cache is the configured one again after.
    @Test func aDormantStartGivesTheLoadsPagesBack() throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        do {
            let store = try SQLiteStore(directory: try DataDirectory(path: temporary.path))
            defer { store.close() }
            var engine = ReceiptsEngine()
            var seq: Int64 = 0
            let users = (0..<20).map { "user\($0)" }
            var commands: [ReceiptsCommand] = users.map { .upsertUser(User(id: $0)) }
            for index in 0..<300 {
                let cid = ChannelCID(type: "messaging", id: "room\(index)")
                commands.append(.createChannel(cid: cid, createdBy: "user0", members: users))
                commands.append(.sendMessage(cid: cid, userID: "user1", draft: MessageDraft(id: "m\(index)", text: String(repeating: "x", count: 500))))
            }
            try StorageRoundTripTests.applyAndCommit(commands, to: store, engine: &engine, seq: &seq)
        }
        let store = try SQLiteStore(directory: try DataDirectory(path: temporary.path))
        defer { store.close() }
        #expect(try store.loadDormant().snapshot.dormantChannels.count == 300)
        let cached = store.cacheUsedBytes
        #expect(cached <= Self.releasedCacheBytes, "\(cached) bytes cached")
        #expect(try store.cacheBytes == SQLiteStore.defaultCacheBytes)
    }

    @Test func aCacheSizeInBytesRoundsUpToWholeKibibytes() throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let store = try SQLiteStore(directory: try DataDirectory(path: temporary.path), cacheBytes: 3 * 1024 * 1024 + 1)
        defer { store.close() }
        #expect(try store.cacheBytes == 3 * 1024 * 1024 + 1024)
    }
}
