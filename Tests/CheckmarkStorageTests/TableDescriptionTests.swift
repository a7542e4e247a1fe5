@testable import CheckmarkStorage
import CheckmarkCore
import CheckmarkTestSupport
import GRDB
import Testing

/// The table descriptions both stores write and load through agree with the schema the migrations
/// build (which stays as released, so existing databases keep loading), and every description
/// gives back the row it was given.
@Suite("Table descriptions")
struct TableDescriptionTests {
    @Test("each description has exactly the columns, types, NULLs and key of the migrated SQLite table")
    func descriptionsMatchMigratedSQLiteSchema() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let data = try DataDirectory(path: directory.path)
        let store = try SQLiteStore(directory: data)
        store.close()
        let queue = try DatabaseQueue(path: data.databasePath)
        try queue.read { db in
            for table in StateTables.all + StateTables.sqliteOnly {
                let info = try Row.fetchAll(db, sql: "PRAGMA table_info(\(table.name))")
                #expect(info.map { $0["name"] as String } == table.columns.map(\.name), "\(table.name)")
                for (row, column) in zip(info, table.columns) {
                    let sqlType = switch column.type {
                    case .text: "TEXT"
                    case .integer, .boolean: "INTEGER"
                    case .blob: "BLOB"
                    }
                    #expect(row["type"] as String == sqlType, "\(table.name).\(column.name)")
                    let isKey = (row["pk"] as Int) > 0
                    #expect((row["notnull"] as Bool) == !column.nullable, "\(table.name).\(column.name) NULL")
                    #expect(isKey == table.primaryKey.contains(column.name), "\(table.name).\(column.name) key")
                }
                let keyOrder = info.filter { ($0["pk"] as Int) > 0 }.sorted { ($0["pk"] as Int) < ($1["pk"] as Int) }.map { $0["name"] as String }
                #expect(keyOrder == table.primaryKey, "\(table.name) key order")
            }
        }
    }

    @Test("each description has exactly the columns, types, NULLs and key of the migrated PostgreSQL table",
          .enabled(if: StoreKind.postgresURL != nil))
    func descriptionsMatchMigratedPostgresSchema() throws {
        let location = try StoreKind.postgres.makeLocation()
        defer { location.remove() }
        let store = try #require(try location.open() as? PostgresStore)
        defer { store.close() }
        for table in StateTables.all + StateTables.postgresOnly {
            let described = try store.describeColumns(of: table.name)
            #expect(described.map(\.name) == table.columns.map(\.name), "\(table.name)")
            for (found, column) in zip(described, table.columns) {
                let expected = switch column.type {
                case .text: ["text"]
                case .integer: ["bigint", "integer"]  // members.position is INTEGER, every other integer BIGINT
                case .boolean: ["boolean"]
                case .blob: ["bytea"]
                }
                #expect(expected.contains(found.type), "\(table.name).\(column.name): \(found.type)")
                #expect(found.nullable == column.nullable, "\(table.name).\(column.name) NULL")
            }
            let key = described.filter { $0.keyPosition != nil }.sorted { $0.keyPosition! < $1.keyPosition! }.map(\.name)
            #expect(key == table.primaryKey, "\(table.name) key")
        }
    }

    @Test("a member's read-state update is its key columns followed by every read-state column, in table order")
    func memberReadStateUpdateNamesRealColumns() {
        #expect(StateTables.memberReadStateUpdate.map(\.name) == [
            "cid", "user_id", "read_position", "last_read", "last_read_message_id", "delivered_position", "last_delivered_at",
            "last_delivered_message_id", "marked_unread_message_id", "read_passes", "delivered_passes", "unread_messages", "countable_seen",
        ])
    }

    @Test("values extracted from a row decode to the same row")
    func valuesRoundTrip() throws {
        let cid = ChannelCID(type: "messaging", id: "general")
        func loaded<Row>(_ table: TableDescription<Row>, _ row: Row) throws -> Row {
            try table.decode(LoadedRow(names: table.columns.map(\.name), values: table.values(row)))
        }
        let user = User(id: "u", name: nil, image: "i", custom: [("k", .string("v"))], privacy: PrivacySettings(readReceipts: false, deliveryReceipts: true),
                        createdAt: Timestamp(rawValue: 5), updatedAt: Timestamp(rawValue: 6))
        #expect(try loaded(StateTables.users, user) == user)
        let type = ChannelType(name: "team", readEvents: false, deliveryEvents: true, createdAt: Timestamp(rawValue: 1), updatedAt: Timestamp(rawValue: 2))
        #expect(try loaded(StateTables.channelTypes, type) == type)
        var engine = ReceiptsEngine()
        for command: ReceiptsCommand in [
            .upsertUser(User(id: "a")), .upsertUser(User(id: "b")),
            .createChannel(cid: cid, createdBy: "a", members: ["a", "b"]),
            .sendMessage(cid: cid, userID: "a", draft: MessageDraft(id: "m1", text: "hi")),
            .sendMessage(cid: cid, userID: "b", draft: MessageDraft(id: "r1", text: "re", parentID: "m1", showInChannel: true, silent: true)),
            .markDelivered(userID: "b", latest: [DeliveredTarget(cid: cid, messageID: "m1")]),
            .markUnread(cid: cid, userID: "b", from: .message("m1")),
        ] { _ = try engine.apply(command, at: Timestamp(rawValue: 1_763_000_000_000_000)).get() }
        let channel = engine.channels[cid]!
        let back = try loaded(StateTables.channels, channel)
        #expect(back.cid == cid && back.createdBy == "a" && back.createdAt == channel.createdAt)
        for (position, message) in channel.messages.heldMessages.enumerated() {
            let row = try loaded(StateTables.messages, (position, message, position + 7))
            #expect(row.position == position && row.message == message && row.countableBefore == position + 7)
        }
        for (position, userID) in channel.memberOrder.enumerated() {
            let member = channel.members[userID]!
            let row = try loaded(StateTables.members, (cid, position, member, position + 3))
            #expect(row.cid == cid && row.position == position && row.member == member && row.countableSeen == position + 3)
        }
        for read in ThreadReadRow.all(of: channel) {
            var expected = read
            let row = try loaded(StateTables.threadReads, read)
            expected.read.unreadReplies = row.read.unreadReplies
            #expect(row == expected)
        }
    }
}
