import CheckmarkCore
@testable import CheckmarkStorage
import CheckmarkTestSupport
import Foundation
import GRDB
import Testing

/// Issue 44: a message is stored once. A `message.new` event is journaled without its message
/// object, which the message's own row holds (``JournaledMessage``); it is read back with that
/// message, and events journaled whole (before schema v6, or that could not refer) stay whole.
@Suite("Journal: a message event refers to its stored message")
struct JournaledMessageTests {
    static let general = StorageRoundTripTests.general
    static let message = #"{"id":"m1","text":"hello \"world\"\n✓","user":{"id":"alice"}}"#
    static let prefix = #"{"type":"message.new","cid":"messaging:general","message_id":"m1","message":"#
    static let suffix = #","user":{"id":"alice"},"watcher_count":2}"#
    static var whole: [UInt8] { Array((prefix + message + suffix).utf8) }
    static var reference: JournaledMessage {
        JournaledMessage(position: 0, offset: prefix.utf8.count, length: message.utf8.count)
    }

    /// Commits the round-trip history's first 7 commands (channel `general` with `m1` at position 0),
    /// then one entry per given event, each in `general` with channel sequences 1, 2, ...
    static func commit(_ events: [(json: [UInt8], message: JournaledMessage?)], to store: any ReceiptsStore) throws {
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        try StorageRoundTripTests.applyAndCommit(Array(StorageRoundTripTests.history.prefix(7)), to: store, engine: &engine, seq: &seq)
        for (index, event) in events.enumerated() {
            seq += 1
            let journaled = JournalEvent(seq: Int64(index + 1), cid: general, channelSeq: Int64(index + 1), type: "message.new",
                                         audience: .watchers, json: event.json, message: event.message)
            try store.commit(CommitBatch(entries: [JournalEntry(seq: seq, at: Timestamp(rawValue: seq), command: .markRead(cid: general, userID: "bob", messageID: nil), events: [journaled])],
                                         footprint: StateFootprint(), engine: engine))
        }
    }

    @Test(arguments: StoreKind.available) func aMessageEventIsStoredWithoutItsMessageAndReadBackWithIt(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        try Self.commit([(Self.whole, Self.reference)], to: store)
        let event = try #require(try store.channelEvents(Self.general, after: 0, through: 1, limit: 10, maxBytes: .max).first)
        #expect(String(decoding: event.json, as: UTF8.self) == Self.prefix + Self.suffix, "the message object is not repeated")
        let read = try #require(event.message)
        #expect(read.position == 0 && read.offset == Self.reference.offset && read.length == Self.reference.length)
        #expect(read.message?.id == "m1" && read.message?.text == "hello \"world\"\n✓" && read.message?.userID == "alice")
        let exported = try #require(try store.journal(after: 0, limit: 100).last?.events.first)
        #expect(exported == event, "the journal export reads the same event")
    }

    /// The byte budget of a replay page counts an event as sent: with its message object.
    @Test(arguments: StoreKind.available) func aPageBudgetCountsTheMessageObject(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        try Self.commit([(Self.whole, Self.reference), (Self.whole, Self.reference)], to: store)
        let storedSize = Self.whole.count - Self.reference.length
        let page = try store.channelEvents(Self.general, after: 0, through: 2, limit: 10, maxBytes: Self.whole.count + storedSize)
        #expect(page.count == 1, "two stored events fit the budget, two whole ones do not")
        #expect(try store.channelEvents(Self.general, after: 0, through: 2, limit: 10, maxBytes: 2 * Self.whole.count).count == 2)
    }

    /// A reference that does not mark an object in the JSON is not trusted: the event is stored whole.
    @Test(arguments: StoreKind.available) func aReferenceThatDoesNotFitIsStoredWhole(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        let off = JournaledMessage(position: 0, offset: Self.reference.offset + 1, length: Self.reference.length)
        let past = JournaledMessage(position: 0, offset: Self.reference.offset, length: Self.whole.count)
        try Self.commit([(Self.whole, off), (Self.whole, past)], to: store)
        let events = try store.channelEvents(Self.general, after: 0, through: 2, limit: 10, maxBytes: .max)
        #expect(events.map(\.json) == [Self.whole, Self.whole] && events.allSatisfy { $0.message == nil })
    }

    /// An event whose stored message is gone is a corrupt database, said as such, not a short event.
    @Test(arguments: StoreKind.available) func anEventWhoseMessageIsNotStoredIsCorrupt(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        var missing = Self.reference
        missing.position = 99
        try Self.commit([(Self.whole, missing)], to: store)
        #expect {
            _ = try store.channelEvents(Self.general, after: 0, through: 1, limit: 10, maxBytes: .max)
        } throws: { error in
            guard case StorageError.corrupt(_, let reason) = error else { return false }
            return reason.contains("message 99 of messaging:general")
        }
    }

    /// A database of schema v5 (the schema of 174c81c, before this change) migrates: its events keep
    /// their whole JSON, and events written after it refer to their messages.
    @Test func aVersion5DatabaseMigratesWithItsWholeEvents() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: directory.path + "/checkmark.sqlite")
        try SQLiteSchema.migrator.migrate(queue, upTo: "v5-pointer-passes-as-rows")
        let old = Self.prefix + Self.message + Self.suffix
        try queue.write { db in
            try db.execute(sql: "INSERT INTO channels (cid, created_by, created_at) VALUES ('messaging:general', NULL, 1)")
            try db.execute(sql: """
                INSERT INTO messages (cid, position, id, user_id, text, type, created_at, parent_id, show_in_channel, silent)
                VALUES ('messaging:general', 0, 'm1', 'alice', 'hello', 'regular', 5, NULL, 0, 0)
                """)
            try db.execute(sql: "INSERT INTO journal (seq, at, command) VALUES (1, 5, ?)",
                           arguments: [String(decoding: CommandCodec.encode(.markRead(cid: Self.general, userID: "bob", messageID: nil)), as: UTF8.self)])
            try db.execute(sql: """
                INSERT INTO journal_events (seq, command_seq, cid, channel_seq, type, payload, audience)
                VALUES (1, 1, 'messaging:general', 1, 'message.new', ?, 'watchers')
                """, arguments: [old])
            try db.execute(sql: "INSERT INTO channel_sequences (cid, last_seq) VALUES ('messaging:general', 1)")
            try db.execute(sql: "INSERT INTO counters (name, value) VALUES ('last_seq', 1), ('last_event_seq', 1)")
        }
        try queue.close()
        let store = try SQLiteStore(directory: try DataDirectory(path: directory.path))
        defer { store.close() }
        let migrated = try store.channelEvents(Self.general, after: 0, through: 1, limit: 10, maxBytes: .max)
        #expect(migrated.map { String(decoding: $0.json, as: UTF8.self) } == [old] && migrated.first?.message == nil)
        let json = Array((Self.prefix + #"{"id":"m2"}"# + Self.suffix).utf8)
        let event = JournalEvent(seq: 2, cid: Self.general, channelSeq: 2, type: "message.new", audience: .watchers, json: json,
                                 message: JournaledMessage(position: 1, offset: Self.prefix.utf8.count, length: #"{"id":"m2"}"#.utf8.count))
        var batch = CommitBatch()
        batch.entries = [JournalEntry(seq: 2, at: Timestamp(rawValue: 10), command: .markRead(cid: Self.general, userID: "bob", messageID: nil), events: [event])]
        batch.messages = [(1, Message(id: "m2", cid: Self.general, userID: "alice", text: "new", createdAt: Timestamp(rawValue: 10)), 1)]
        try store.commit(batch)
        let both = try store.channelEvents(Self.general, after: 0, through: 2, limit: 10, maxBytes: .max)
        #expect(both.count == 2 && both[0].message == nil && both[1].message?.message?.text == "new")
        #expect(String(decoding: both[1].json, as: UTF8.self) == Self.prefix + Self.suffix)
    }

    /// A `send_message` is journaled without its text when its message is stored with it, and read
    /// back whole: by the export and, in a cluster, by the nodes that apply it.
    @Test(arguments: StoreKind.available) func aSendMessageIsJournaledWithoutItsTextAndReadBackWhole(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        try StorageRoundTripTests.applyAndCommit(Array(StorageRoundTripTests.history.prefix(5)), to: store, engine: &engine, seq: &seq)
        let text = String(repeating: "a long text ✓ ", count: 40)
        var sent: [ReceiptsCommand] = []
        for (index, id) in ["k1", "k2"].enumerated() {
            let command = ReceiptsCommand.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: id, text: text + id))
            _ = try engine.apply(command, at: Timestamp(rawValue: 1_763_100_000_000_000 + Int64(index))).get()
            seq += 1
            let position = try #require(engine.channels[Self.general]?.messages.position(of: id))
            // The second names a position whose message has another text: it is kept whole.
            let entry = JournalEntry(seq: seq, at: engine.clock, command: command, events: [], messagePosition: index == 0 ? position : position - 1)
            try store.commit(CommitBatch(entries: [entry], footprint: engine.takeFootprint(), engine: engine))
            sent.append(command)
        }
        let read = try store.journal(after: seq - 2, limit: 10)
        #expect(read.map(\.command) == sent && read.allSatisfy { $0.messagePosition == nil })
        if let shared = store as? any SharedReceiptsStore {
            var applied = Array(repeating: Int64(0), count: JournalStream.count)
            applied[JournalStream.cluster.rawValue] = seq - 2
            #expect(try shared.commands(after: applied, limit: 10).map(\.command) == sent)
        }
        if case .sqlite(let directory) = location {
            let queue = try DatabaseQueue(path: directory.path + "/checkmark.sqlite")
            let stored = try queue.read { db in
                try Row.fetchAll(db, sql: "SELECT command, message_position FROM journal WHERE seq > ? ORDER BY seq", arguments: [seq - 2])
            }
            try queue.close()
            #expect(!(stored[0]["command"] as String).contains("a long text") && (stored[0]["message_position"] as Int64?) != nil)
            #expect((stored[1]["command"] as String).contains("a long text") && (stored[1]["message_position"] as Int64?) == nil)
        }
    }
}
