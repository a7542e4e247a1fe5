@testable import CheckmarkStorage
import CheckmarkCore
import CheckmarkTestSupport
import Foundation
import GRDB
import Testing

/// Issue: refuse with a clear message, not a crash, when the directory is unwritable, the database is
/// locked by another process, the schema is newer than the binary, or the file is corrupt.
@Suite("Storage start-up refusals")
struct StartupRefusalTests {
    @Test func unwritableDirectoryIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // A regular file where the directory's parent should be: nobody, root included, can create it.
        #expect(FileManager.default.createFile(atPath: directory.path, contents: Data("x".utf8)))
        #expect {
            _ = try DataDirectory(path: directory.path + "/data")
        } throws: { error in
            guard case StorageError.directoryUnwritable = error else { return false }
            return "\(error)".contains("not writable")
        }
    }

    @Test func secondHolderOfTheDirectoryIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let first = try DataDirectory(path: directory.path)
        #expect {
            _ = try DataDirectory(path: directory.path)
        } throws: { error in
            guard case StorageError.lockedByAnotherProcess = error else { return false }
            return "\(error)".contains("in use by another checkmark process")
        }
        withExtendedLifetime(first) {}
    }

    @Test func newerSchemaIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        do {
            let store = try SQLiteStore(directory: try DataDirectory(path: directory.path))
            store.close()
        }
        let queue = try DatabaseQueue(path: directory.path + "/checkmark.sqlite")
        try queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')") }
        try queue.close()
        #expect {
            _ = try SQLiteStore(directory: try DataDirectory(path: directory.path))
        } throws: { error in
            guard case StorageError.schemaNewer(_, let unknown) = error else { return false }
            return unknown == ["v99-from-the-future"] && "\(error)".contains("newer checkmark")
        }
    }

    /// Regression (issue 18): a zero-length database file started as an empty database without a word.
    @Test func zeroLengthDatabaseFileIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: directory.path + "/checkmark.sqlite", contents: Data()))
        #expect {
            _ = try SQLiteStore(directory: try DataDirectory(path: directory.path))
        } throws: { error in
            guard case StorageError.corrupt = error else { return false }
            return "\(error)".contains("empty (0 bytes)")
        }
    }

    /// The v4 migration (message ids unique per channel) rebuilds the messages table: what a v3
    /// database held is all there afterwards, and the same id may then stand in two channels.
    @Test func databaseOfTheFormerSchemaMigratesWithItsMessages() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: directory.path + "/checkmark.sqlite")
        try SQLiteSchema.migrator.migrate(queue, upTo: "v3-thread-reads")
        try queue.write { db in
            try db.execute(sql: "INSERT INTO channels (cid, created_by, created_at) VALUES ('messaging:a', NULL, 1), ('messaging:b', NULL, 1)")
            try db.execute(sql: """
                INSERT INTO messages (cid, position, id, user_id, text, type, created_at, parent_id, show_in_channel, silent)
                VALUES ('messaging:a', 0, 'm1', 'u', 'hello', 'regular', 5, NULL, 0, 0)
                """)
        }
        try queue.close()
        let store = try SQLiteStore(directory: try DataDirectory(path: directory.path))
        defer { store.close() }
        let loaded = try store.load().snapshot.channels.first { $0.cid.description == "messaging:a" }
        #expect(loaded?.messages.heldMessages.map(\.id) == ["m1"] && loaded?.messages.heldMessages.first?.text == "hello")
        let b = ChannelCID(type: "messaging", id: "b")
        var batch = CommitBatch()
        batch.messages = [(0, Message(id: "m1", cid: b, userID: "u", text: "same id", createdAt: Timestamp(rawValue: 6)), 0)]
        try store.commit(batch)
        #expect(try store.load().snapshot.channels.first { $0.cid == b }?.messages.heldMessages.first?.text == "same id")
    }

    @Test func corruptFileIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        #expect(FileManager.default.createFile(atPath: directory.path + "/checkmark.sqlite", contents: garbage))
        #expect {
            _ = try SQLiteStore(directory: try DataDirectory(path: directory.path))
        } throws: { error in
            guard case StorageError.corrupt = error else { return false }
            return "\(error)".contains("corrupt")
        }
    }

    /// Issue 44: the structure check of every page runs after start (its time grows with the file),
    /// and still finds a damaged page that opening and loading never read: here a leaf of the
    /// journal's time index.
    @Test func aDamagedPageOutsideTheStateIsFoundByTheStructureCheck() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let data = try DataDirectory(path: directory.path)
        do {
            let store = try SQLiteStore(directory: data)
            var engine = ReceiptsEngine()
            var seq: Int64 = 0
            let cid = ChannelCID(type: "messaging", id: "general")
            let setup: [ReceiptsCommand] = [.upsertUser(User(id: "alice")), .createChannel(cid: cid, createdBy: "alice", members: ["alice"])]
            let messages = (0..<600).map { ReceiptsCommand.sendMessage(cid: cid, userID: "alice", draft: MessageDraft(id: "m\($0)", text: "hello")) }
            try StorageRoundTripTests.applyAndCommit(setup + messages, to: store, engine: &engine, seq: &seq)
            try store.verify()
            store.close()
        }
        let (page, pageSize) = try {
            let queue = try DatabaseQueue(path: data.databasePath)
            defer { try? queue.close() }
            return try queue.read { db in
                (try Int.fetchOne(db, sql: "SELECT pageno FROM dbstat WHERE name = 'journal_at' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1")!,
                 try Int.fetchOne(db, sql: "PRAGMA page_size")!)
            }
        }()
        let file = try #require(FileHandle(forUpdatingAtPath: data.databasePath))
        try file.seek(toOffset: UInt64((page - 1) * pageSize))
        try file.write(contentsOf: Data(repeating: 0xA5, count: pageSize))
        try file.close()
        let store = try SQLiteStore(directory: data)
        defer { store.close() }
        #expect(try store.load().snapshot.channels.first?.messages.count == 600, "opening and loading do not read that page")
        #expect {
            try store.verify()
        } throws: { error in
            guard case StorageError.corrupt = error else { return false }
            return "\(error)".contains("journal_at") || "\(error)".contains("Page \(page)") || "\(error)".contains("page \(page)")
        }
    }
}
