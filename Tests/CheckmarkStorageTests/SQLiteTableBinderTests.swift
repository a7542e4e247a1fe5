@testable import CheckmarkStorage
import CheckmarkCore
import Foundation
import GRDB
import Testing

/// The SQLite binder writes rows through prepared statements, binding values straight into them:
/// every row count comes back whole and in order, later rows replace earlier ones with the same key,
/// and empty texts and blobs stay empty (never NULL).
@Suite("SQLite table binder")
struct SQLiteTableBinderTests {
    /// A migrated database in a fresh directory.
    static func database() throws -> (DatabaseQueue, TemporaryDirectory) {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: directory.path + "/binder.sqlite")
        try SQLiteSchema.migrator.migrate(queue)
        return (queue, directory)
    }

    @Test(arguments: [0, 1, 31, 32, 33, 64, 65, 100])
    func everyRowCountRoundTrips(count: Int) throws {
        let (queue, directory) = try Self.database()
        defer { directory.remove() }
        let binder = SQLiteTableBinder(StateTables.counters)
        let rows: [StateTables.CounterRow] = (0..<count).map { ("counter-\($0)", Int64($0) * 7 - 3) }
        try queue.write { db in try binder.write(rows, .insert, in: db) }
        let loaded = try queue.read { db in try binder.load(db, "ORDER BY value") }
        #expect(loaded.map(\.name) == rows.map(\.name))
        #expect(loaded.map(\.value) == rows.map(\.value))
    }

    @Test func aLaterRowWithTheSameKeyReplacesAnEarlierOneInOneWrite() throws {
        let (queue, directory) = try Self.database()
        defer { directory.remove() }
        let binder = SQLiteTableBinder(StateTables.counters)
        let rows: [StateTables.CounterRow] = [("a", 1), ("b", 2), ("a", 3)] + (0..<40).map { ("n\($0)", Int64($0)) } + [("b", 4)]
        try queue.write { db in try binder.write(rows, .upsert, in: db) }
        let loaded = try queue.read { db in try binder.load(db, "WHERE name IN ('a', 'b') ORDER BY name") }
        #expect(loaded.map(\.value) == [3, 4])
    }

    @Test func anInsertOfAnExistingKeyFailsTheTransaction() throws {
        let (queue, directory) = try Self.database()
        defer { directory.remove() }
        let binder = SQLiteTableBinder(StateTables.counters)
        #expect(throws: DatabaseError.self) {
            let rows: [StateTables.CounterRow] = [("a", 1), ("b", 2), ("a", 3)]
            try queue.write { db in try binder.write(rows, .insert, in: db) }
        }
        #expect(try queue.read { db in try binder.load(db) }.isEmpty)
    }

    @Test func emptyTextsAndBlobsStayEmptyAndNilsStayNull() throws {
        let (queue, directory) = try Self.database()
        defer { directory.remove() }
        let users = SQLiteTableBinder(StateTables.users)
        let named = User(id: "empty-name", name: "", image: nil, custom: [])
        let unnamed = User(id: "no-name", name: nil, image: "", custom: [])
        try queue.write { db in try users.write([named, unnamed], .upsert, in: db) }
        let loaded = try queue.read { db in try users.load(db, "ORDER BY id") }
        #expect(loaded.map(\.id) == ["empty-name", "no-name"])
        #expect(loaded[0].name == "" && loaded[0].image == nil)
        #expect(loaded[1].name == nil && loaded[1].image == "")

        // A member without passes: its NOT NULL blobs hold zero bytes, and updating them keeps it so.
        let cid = ChannelCID(type: "messaging", id: "general")
        let member = Member(userID: "no-name", createdAt: Timestamp(rawValue: 5), read: ReadState(joinedAt: Timestamp(rawValue: 5), messageCount: 0))
        #expect(member.read.readPasses.isEmpty && member.read.deliveredPasses.isEmpty)
        let members = SQLiteTableBinder(StateTables.members)
        try queue.write { db in
            try members.write([(cid: cid, position: 0, member: member, countableSeen: 0)], .insert, in: db)
            try members.update([(cid: cid, position: 0, member: member, countableSeen: 0)], columns: StateTables.memberReadStateUpdate, in: db)
        }
        let blobs = try queue.read { db in
            try Row.fetchOne(db, sql: "SELECT typeof(read_passes), length(read_passes), typeof(delivered_passes) FROM members")
        }
        #expect(blobs?[0] as String? == "blob")
        #expect(blobs?[1] as Int? == 0)
        #expect(blobs?[2] as String? == "blob")
        #expect(try queue.read { db in try members.load(db) }.map(\.member) == [member])
    }
}
