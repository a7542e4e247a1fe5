@testable import CheckmarkStorage
import CheckmarkCore
import CheckmarkTestSupport
import Foundation
import GRDB
import Testing

/// SQLite keeps a member's pointer passes as rows appended as they are made (schema v5): a
/// confirmation writes its own pass, not the member's whole history again, and every store opened
/// on the file loads the same passes the engine holds.
@Suite("SQLite pointer passes as rows")
struct SQLitePointerPassesTests {
    static let cid = ChannelCID(type: "messaging", id: "general")

    static func messages(_ count: Int) -> [ReceiptsCommand] {
        (0..<count).map { .sendMessage(cid: cid, userID: "alice", draft: MessageDraft(id: "m\($0)", text: "message \($0)")) }
    }

    static let setup: [ReceiptsCommand] = [
        .upsertUser(User(id: "alice")), .upsertUser(User(id: "bob")),
        .createChannel(cid: cid, createdBy: "alice", members: ["alice", "bob"]),
    ] + messages(40)

    /// `(seq, kind, position)` of `userID`'s stored passes, in the order they were written.
    static func storedPasses(of userID: String, at path: String) throws -> [[Int64]] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT seq, kind, position FROM pointer_passes WHERE user_id = ? ORDER BY seq", arguments: [userID])
                .map { [$0[0], $0[1], $0[2]] }
        }
    }

    /// The positions of `userID`'s stored passes of `kind`, in the order they were written.
    static func storedPositions(of userID: String, _ kind: PointerPassKind, at path: String) throws -> [Int] {
        try storedPasses(of: userID, at: path).filter { $0[1] == kind.rawValue }.map { Int($0[2]) }
    }

    /// A fresh data directory (removed by the caller) and an engine with no state.
    static func fresh() throws -> (TemporaryDirectory, DataDirectory, ReceiptsEngine, seq: Int64) {
        let directory = TemporaryDirectory()
        return (directory, try DataDirectory(path: directory.path), ReceiptsEngine(), 0)
    }

    static func passBlobBytes(at path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in try Int.fetchOne(db, sql: "SELECT SUM(length(read_passes) + length(delivered_passes)) FROM members") ?? 0 }
    }

    @Test func eachConfirmationAppendsItsPassesAndLeavesTheEarlierRowsAlone() throws {
        var (directory, data, engine, seq) = try Self.fresh()
        defer { directory.remove() }
        let store = try SQLiteStore(directory: data)
        try StorageRoundTripTests.applyAndCommit(Self.setup, to: store, engine: &engine, seq: &seq)
        var first: [Int64]?
        for n in [3, 4, 10, 11, 25, 39] {
            try StorageRoundTripTests.applyAndCommit([.markRead(cid: Self.cid, userID: "bob", messageID: "m\(n)")],
                                                     to: store, engine: &engine, seq: &seq, startingAt: 1_770_000_000_000_000 + Int64(n) * 10_000_000)
            let read = engine.channels[Self.cid]!.members["bob"]!.read
            let rows = try Self.storedPasses(of: "bob", at: data.databasePath)
            #expect(rows.filter { $0[1] == 0 }.map { Int($0[2]) } == read.readPasses.map(\.position))
            #expect(rows.filter { $0[1] == 1 }.map { Int($0[2]) } == read.deliveredPasses.map(\.position))
            // Written once: the first pass keeps the row it got, whatever came after it.
            if first == nil { first = rows.first } else { #expect(rows.first == first) }
        }
        #expect(try Self.passBlobBytes(at: data.databasePath) == 0)
        store.close()
        let reopened = try SQLiteStore(directory: data)
        defer { reopened.close() }
        #expect(fingerprint(ReceiptsEngine(restoring: try reopened.load().snapshot)) == fingerprint(engine))
    }

    @Test func aStoreReopenedMidHistoryAppendsAfterThePassesItFinds() throws {
        var (directory, data, engine, seq) = try Self.fresh()
        defer { directory.remove() }
        do {
            let store = try SQLiteStore(directory: data)
            try StorageRoundTripTests.applyAndCommit(Self.setup + [.markRead(cid: Self.cid, userID: "bob", messageID: "m5")],
                                                     to: store, engine: &engine, seq: &seq)
            store.close()
        }
        let store = try SQLiteStore(directory: data)
        defer { store.close() }
        try StorageRoundTripTests.applyAndCommit([
            .markRead(cid: Self.cid, userID: "bob", messageID: "m9"),
            .markDelivered(userID: "alice", latest: [DeliveredTarget(cid: Self.cid, messageID: "m12")]),
            .markRead(cid: Self.cid, userID: "bob", messageID: "m20"),
        ], to: store, engine: &engine, seq: &seq, startingAt: 1_780_000_000_000_000)
        let read = engine.channels[Self.cid]!.members["bob"]!.read
        #expect(try Self.storedPositions(of: "bob", .read, at: data.databasePath) == read.readPasses.map(\.position))
        #expect(fingerprint(ReceiptsEngine(restoring: try store.load().snapshot)) == fingerprint(engine))
    }

    @Test func aMemberRemovedAndAddedAgainKeepsNoPassesOfItsFormerMembership() throws {
        var (directory, data, engine, seq) = try Self.fresh()
        defer { directory.remove() }
        let store = try SQLiteStore(directory: data)
        defer { store.close() }
        try StorageRoundTripTests.applyAndCommit(Self.setup + [
            .markRead(cid: Self.cid, userID: "bob", messageID: "m5"),
            .markRead(cid: Self.cid, userID: "alice", messageID: "m7"),
            .removeMembers(cid: Self.cid, userIDs: ["bob"]),
        ], to: store, engine: &engine, seq: &seq)
        #expect(try Self.storedPasses(of: "bob", at: data.databasePath).isEmpty)
        try StorageRoundTripTests.applyAndCommit([
            .addMembers(cid: Self.cid, userIDs: ["bob"]),
            .sendMessage(cid: Self.cid, userID: "alice", draft: MessageDraft(id: "late", text: "late")),
            .markRead(cid: Self.cid, userID: "bob", messageID: "late"),
        ], to: store, engine: &engine, seq: &seq, startingAt: 1_790_000_000_000_000)
        let read = engine.channels[Self.cid]!.members["bob"]!.read
        #expect(try Self.storedPositions(of: "bob", .read, at: data.databasePath) == read.readPasses.map(\.position))
        #expect(fingerprint(ReceiptsEngine(restoring: try store.load().snapshot)) == fingerprint(engine))
    }

    /// Applies `commands` and commits them all as one batch (one group commit).
    static func applyAndCommitTogether(_ commands: [ReceiptsCommand], to store: SQLiteStore, engine: inout ReceiptsEngine,
                                       seq: inout Int64, at start: Int64) throws {
        var entries: [JournalEntry] = []
        var footprint = StateFootprint()
        for (offset, command) in commands.enumerated() {
            let outcome = try engine.apply(command, at: Timestamp(rawValue: start + Int64(offset))).get()
            engine.takeFootprint(into: &footprint)
            guard outcome.changed, ReceiptsEngine.isDurable(command) else { continue }
            seq += 1
            entries.append(JournalEntry(seq: seq, at: engine.clock, command: command, events: []))
        }
        try store.commit(CommitBatch(entries: entries, footprint: footprint, engine: engine))
    }

    /// In one batch a member leaves, joins again and reads: its former rows are not the start of its
    /// passes, so they are replaced; the other members' rows stay, with their new passes after them.
    @Test func aMemberWhoLeftAndJoinedAgainInOneBatchHasItsRowsReplaced() throws {
        var (directory, data, engine, seq) = try Self.fresh()
        defer { directory.remove() }
        let store = try SQLiteStore(directory: data)
        defer { store.close() }
        try StorageRoundTripTests.applyAndCommit(Self.setup + [
            .markRead(cid: Self.cid, userID: "bob", messageID: "m3"), .markRead(cid: Self.cid, userID: "bob", messageID: "m5"),
            .markRead(cid: Self.cid, userID: "alice", messageID: "m7"),
        ], to: store, engine: &engine, seq: &seq)
        let aliceBefore = try Self.storedPasses(of: "alice", at: data.databasePath)
        try Self.applyAndCommitTogether([
            .removeMembers(cid: Self.cid, userIDs: ["bob"]),
            .addMembers(cid: Self.cid, userIDs: ["bob"]),
            .sendMessage(cid: Self.cid, userID: "alice", draft: MessageDraft(id: "n1", text: "n1")),
            .sendMessage(cid: Self.cid, userID: "alice", draft: MessageDraft(id: "n2", text: "n2")),
            .markRead(cid: Self.cid, userID: "bob", messageID: "n1"),
            .markRead(cid: Self.cid, userID: "bob", messageID: "n2"),
        ], to: store, engine: &engine, seq: &seq, at: 1_790_000_000_000_000)
        let read = engine.channels[Self.cid]!.members["bob"]!.read
        #expect(read.readPasses.count == 2)
        #expect(try Self.storedPositions(of: "bob", .read, at: data.databasePath) == read.readPasses.map(\.position))
        #expect(try Self.storedPositions(of: "bob", .delivered, at: data.databasePath) == read.deliveredPasses.map(\.position))
        // Alice's rows (her messages moved her own pointers) are kept and appended to, not rewritten.
        let alice = try Self.storedPasses(of: "alice", at: data.databasePath)
        let aliceRead = engine.channels[Self.cid]!.members["alice"]!.read
        #expect(alice.count == aliceRead.readPasses.count + aliceRead.deliveredPasses.count && alice.count > aliceBefore.count)
        #expect(Array(alice.prefix(aliceBefore.count)) == aliceBefore)
        #expect(fingerprint(ReceiptsEngine(restoring: try store.load().snapshot)) == fingerprint(engine))
    }

    /// A batch that fails after its passes were counted leaves the file as it was: a store opened on it
    /// loads the state before the batch and appends after what it finds.
    @Test func aFailedCommitLeavesNoPassesAndTheNextStoreGoesOnFromTheFile() throws {
        var (directory, data, engine, seq) = try Self.fresh()
        defer { directory.remove() }
        let committed: String
        do {
            let store = try SQLiteStore(directory: data)
            defer { store.close() }
            try StorageRoundTripTests.applyAndCommit(Self.setup + [.markRead(cid: Self.cid, userID: "bob", messageID: "m3")],
                                                     to: store, engine: &engine, seq: &seq)
            committed = fingerprint(engine)
            _ = try engine.apply(.markRead(cid: Self.cid, userID: "bob", messageID: "m9"), at: Timestamp(rawValue: 1_795_000_000_000_000)).get()
            var batch = CommitBatch(entries: [], footprint: engine.takeFootprint(), engine: engine)
            #expect(batch.members.count == 1)
            // A message row that exists already: the insert fails after the member's passes were counted.
            batch.messages = [(0, engine.channels[Self.cid]!.messages[0], 0)]
            #expect(throws: StorageError.self) { try store.commit(batch) }
            #expect(throws: StorageError.self) { try store.commit(CommitBatch()) }
        }
        let store = try SQLiteStore(directory: data)
        defer { store.close() }
        var restored = ReceiptsEngine(restoring: try store.load().snapshot)
        #expect(fingerprint(restored) == committed)
        #expect(try Self.storedPositions(of: "bob", .read, at: data.databasePath) == [4])
        var restoredSeq = seq
        try StorageRoundTripTests.applyAndCommit([.markRead(cid: Self.cid, userID: "bob", messageID: "m12")],
                                                 to: store, engine: &restored, seq: &restoredSeq, startingAt: 1_796_000_000_000_000)
        #expect(try Self.storedPositions(of: "bob", .read, at: data.databasePath) == [4, 13])
        #expect(fingerprint(ReceiptsEngine(restoring: try store.load().snapshot)) == fingerprint(restored))
    }

    /// The v5 migration moves the passes a v4 database kept in its member rows into rows of their own,
    /// in order, and empties the member rows' pass columns; later confirmations append after them.
    @Test func passesKeptInMemberRowsBeforeV5BecomeRowsInOrder() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let path = directory.path + "/checkmark.sqlite"
        let readPasses = [PointerPass(position: 1, at: Timestamp(rawValue: 10)), PointerPass(position: 3, at: Timestamp(rawValue: 20))]
        let deliveredPasses = readPasses + [PointerPass(position: 4, at: Timestamp(rawValue: 30))]
        do {
            let queue = try DatabaseQueue(path: path)
            try SQLiteSchema.migrator.migrate(queue, upTo: "v4-message-ids-per-channel")
            try queue.write { db in
                try db.execute(sql: "INSERT INTO channels (cid, created_by, created_at) VALUES ('messaging:a', NULL, 1)")
                for n in 0..<5 {
                    try db.execute(sql: """
                        INSERT INTO messages (cid, position, id, user_id, text, type, created_at, parent_id, show_in_channel, silent)
                        VALUES ('messaging:a', ?, ?, 'u', 'hello', 'regular', ?, NULL, 1, 0)
                        """, arguments: [n, "m\(n)", 5 + n])
                }
                try db.execute(sql: """
                    INSERT INTO members (cid, user_id, position, created_at, read_position, last_read, last_read_message_id,
                        delivered_position, last_delivered_at, last_delivered_message_id, marked_unread_message_id, read_passes, delivered_passes)
                    VALUES ('messaging:a', 'v', 0, 1, 3, 20, 'm2', 4, 30, 'm3', NULL, ?, ?), ('messaging:a', 'w', 1, 1, 2, 15, 'm1', 2, NULL, NULL, NULL, ?, X'')
                    """, arguments: [StoredPasses.encode(readPasses), StoredPasses.encode(deliveredPasses), StoredPasses.encode([readPasses[0]])])
            }
            try queue.close()
        }
        let data = try DataDirectory(path: directory.path)
        let store = try SQLiteStore(directory: data)
        defer { store.close() }
        let a = ChannelCID(type: "messaging", id: "a")
        let loaded = try #require(try store.load().snapshot.channels.first { $0.cid == a }?.members["v"])
        #expect(Array(loaded.read.readPasses) == readPasses)
        #expect(Array(loaded.read.deliveredPasses) == deliveredPasses)
        let w = try #require(try store.load().snapshot.channels.first { $0.cid == a }?.members["w"])
        #expect(w.read.readPasses == [readPasses[0]] && w.read.deliveredPasses.isEmpty)
        // The v7 migration counts what each member had unread: u's messages after its read pointer.
        #expect(loaded.read.unreadMessages == 2 && w.read.unreadMessages == 3)
        #expect(try Self.passBlobBytes(at: path) == 0)
        var member = loaded
        member.read.readPasses.append(PointerPass(position: 5, at: Timestamp(rawValue: 40)))
        member.read.deliveredPasses.append(PointerPass(position: 5, at: Timestamp(rawValue: 40)))
        var batch = CommitBatch()
        batch.members = [(a, member, 5)]
        try store.commit(batch)
        let again = try #require(try store.load().snapshot.channels.first { $0.cid == a }?.members["v"])
        #expect(again.read.readPasses == member.read.readPasses)
        #expect(again.read.deliveredPasses == member.read.deliveredPasses)
        #expect(try Self.storedPasses(of: "v", at: path).count == 7)
    }

    /// Rows that do not fit together are refused as corrupt, naming what is wrong (start-up reads
    /// messages and passes column by column since issue 44).
    @Test(arguments: [
        ("INSERT INTO messages (cid, position, id, user_id, text, type, created_at, parent_id, show_in_channel, silent) VALUES ('messaging:general', 99, 'late', 'alice', 'x', 'regular', 1, NULL, 0, 0)", "gap at position 99"),
        ("INSERT INTO messages (cid, position, id, user_id, text, type, created_at, parent_id, show_in_channel, silent) VALUES ('messaging:nowhere', 0, 'lost', 'alice', 'x', 'regular', 1, NULL, 0, 0)", "unknown channel messaging:nowhere"),
        ("INSERT INTO messages (cid, position, id, user_id, text, type, created_at, parent_id, show_in_channel, silent) VALUES ('not a cid', 0, 'odd', 'alice', 'x', 'regular', 1, NULL, 0, 0)", "invalid cid not a cid"),
        ("INSERT INTO pointer_passes (cid, user_id, kind, position, at) VALUES ('messaging:general', 'mallory', 0, 1, 1)", "mallory, not a member"),
        ("INSERT INTO pointer_passes (cid, user_id, kind, position, at) VALUES ('messaging:general', 'bob', 7, 1, 1)", "pointer pass of kind 7"),
        ("INSERT INTO pointer_passes (cid, user_id, kind, position, at) VALUES ('messaging:nowhere', 'bob', 0, 1, 1)", "not a member of messaging:nowhere"),
    ])
    func rowsThatDoNotFitAreRefusedAsCorrupt(row: String, says reason: String) throws {
        var (directory, data, engine, seq) = try Self.fresh()
        defer { directory.remove() }
        do {
            let store = try SQLiteStore(directory: data)
            try StorageRoundTripTests.applyAndCommit(Self.setup, to: store, engine: &engine, seq: &seq)
            store.close()
        }
        do {
            let queue = try DatabaseQueue(path: data.databasePath)
            try queue.write { db in try db.execute(sql: row) }
            try queue.close()
        }
        let store = try SQLiteStore(directory: data)
        defer { store.close() }
        #expect {
            _ = try store.load()
        } throws: { error in
            guard case StorageError.corrupt = error else { return false }
            return "\(error)".contains(reason)
        }
    }
}
