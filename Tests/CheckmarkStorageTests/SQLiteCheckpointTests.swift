import CheckmarkCore
import CheckmarkStorage
import CheckmarkTestSupport
import Foundation
import Logging
import Testing

/// The embedded database's write-ahead log is checkpointed in the background, never inside a commit
/// below the limit, and stays bounded (``SQLiteCheckpointPolicy``).
@Suite("SQLite write-ahead log checkpoints")
struct SQLiteCheckpointTests {
    /// Commits `count` users of about 3 KB each, one per commit: every commit adds log pages.
    static func commitUsers(_ range: Range<Int>, to store: SQLiteStore, engine: inout ReceiptsEngine, seq: inout Int64) throws {
        let name = String(repeating: "n", count: 3000)
        let commands = range.map { ReceiptsCommand.upsertUser(User(id: "user-\($0)", name: name)) }
        try StorageRoundTripTests.applyAndCommit(commands, to: store, engine: &engine, seq: &seq)
    }

    /// Pages the log file holds (a 32-byte header, then frames of a 24-byte header and a 4 KiB page).
    static func logPages(_ directory: DataDirectory) -> Int {
        let size = (try? FileManager.default.attributesOfItem(atPath: directory.databasePath + "-wal"))?[.size] as? Int ?? 0
        return max(0, size - 32) / (24 + 4096)
    }

    static func waitForBackgroundCheckpoint(_ store: SQLiteStore) async throws {
        for _ in 0..<200 where store.checkpoints.background == 0 { try await Task.sleep(for: .milliseconds(25)) }
    }

    @Test func commitsPastTheThresholdLeaveTheCheckpointToTheBackground() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let store = try SQLiteStore(directory: try DataDirectory(path: temporary.path),
                                    checkpoints: SQLiteCheckpointPolicy(backgroundPages: 8, limitPages: 1_000_000))
        defer { store.close() }
        var engine = ReceiptsEngine(), seq: Int64 = 0
        try Self.commitUsers(0..<100, to: store, engine: &engine, seq: &seq)
        try await Self.waitForBackgroundCheckpoint(store)
        #expect(store.checkpoints.background >= 1)
        #expect(store.checkpoints.atLimit == 0, "no commit below the limit checkpoints")
    }

    @Test func aCommitAtTheLimitCheckpointsSoTheLogStaysBounded() throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let directory = try DataDirectory(path: temporary.path)
        let log = CapturedLog()
        // Background checkpoints never start: only the limit keeps the log from growing.
        let store = try SQLiteStore(directory: directory, checkpoints: SQLiteCheckpointPolicy(backgroundPages: 1_000_000, limitPages: 16),
                                    logger: Logger(label: "checkpoint-test") { _ in CapturingLogHandler(log: log) })
        defer { store.close() }
        var engine = ReceiptsEngine(), seq: Int64 = 0
        try Self.commitUsers(0..<300, to: store, engine: &engine, seq: &seq)
        #expect(store.checkpoints.atLimit >= 1 && store.checkpoints.background == 0)
        // 300 commits of a 3 KB user write well over 600 pages. The file keeps its largest size: creating
        // the schema (one transaction, before the first commit) takes about 91 pages since schema v14
        // (81 at v12); after it, the log holds at most the limit and one commit more.
        #expect(Self.logPages(directory) <= 100, "log of \(Self.logPages(directory)) pages")
        #expect(log.all.count(where: { $0.message.contains("reached max_wal_pages") }) == 1, "logged once: \(log.all.map(\.message))")
    }

    @Test func rowsCheckpointedInTheBackgroundSurviveAReopen() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        var engine = ReceiptsEngine(), seq: Int64 = 0
        do {
            let store = try SQLiteStore(directory: try DataDirectory(path: temporary.path),
                                        checkpoints: SQLiteCheckpointPolicy(backgroundPages: 8, limitPages: 64))
            try Self.commitUsers(0..<150, to: store, engine: &engine, seq: &seq)
            try await Self.waitForBackgroundCheckpoint(store)
            #expect(store.checkpoints.background >= 1)
            store.close()
        }
        let reopened = try SQLiteStore(directory: try DataDirectory(path: temporary.path))
        defer { reopened.close() }
        let loaded = ReceiptsEngine(restoring: try reopened.load().snapshot)
        #expect(loaded.users.count == 150)
        #expect(fingerprint(loaded) == fingerprint(engine))
    }
}
