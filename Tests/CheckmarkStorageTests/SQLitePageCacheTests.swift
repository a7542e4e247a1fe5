import CheckmarkStorage
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

    @Test func aCacheSizeInBytesRoundsUpToWholeKibibytes() throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let store = try SQLiteStore(directory: try DataDirectory(path: temporary.path), cacheBytes: 3 * 1024 * 1024 + 1)
        defer { store.close() }
        #expect(try store.cacheBytes == 3 * 1024 * 1024 + 1024)
    }
}
