import CheckmarkCore
import CheckmarkStorage
import CheckmarkTestSupport
import Foundation
import GRDB
import Testing

/// Issue 44: unread counts are stored (schema v7), so that a start need not read messages to know
/// them. A member's row keeps its count and the channel's countable total it is as of; a message row
/// keeps the countable messages before it. Loaded counts must equal a recount after any history,
/// committed in batches as the service commits, and a database of the former schema gets its counts
/// on migration.
@Suite("Stored unread counts")
struct StoredUnreadCountsTests {
    static let users = ["u0", "u1", "u2", "u3"]
    static let cids = (0..<2).map { ChannelCID(type: "messaging", id: "c\($0)") }

    /// A deterministic command stream (xorshift) over sends of every kind (thread replies shown or not,
    /// silent, system), reads by id and to the end, mark unread, mark all read, members added and removed.
    struct History {
        var state: UInt64

        mutating func next(_ bound: Int) -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(bound))
        }

        mutating func command(in engine: ReceiptsEngine, number: Int) -> ReceiptsCommand {
            let user = StoredUnreadCountsTests.users[next(StoredUnreadCountsTests.users.count)]
            let cid = StoredUnreadCountsTests.cids[next(StoredUnreadCountsTests.cids.count)]
            let messages = engine.channels[cid]?.messages.heldMessages ?? []
            let some = messages.isEmpty ? "none" : messages[next(messages.count)].id
            switch next(10) {
            case 0, 1, 2, 3:
                let parent = next(4) == 0 ? messages.first { $0.parentID == nil }?.id : nil
                return .sendMessage(cid: cid, userID: user, draft: MessageDraft(
                    id: "m\(number)", text: "t", kind: next(8) == 0 ? .system : .regular, parentID: parent,
                    showInChannel: next(2) == 0, silent: next(6) == 0))
            case 4: return .markRead(cid: cid, userID: user, messageID: nil)
            case 5: return .markRead(cid: cid, userID: user, messageID: some)
            case 6: return .markUnread(cid: cid, userID: user, from: .message(some))
            case 7:
                guard next(2) == 0, let parent = messages.first(where: { $0.parentID == nil })?.id else { return .markReadMany(userID: user, channels: nil) }
                return .markThreadRead(cid: cid, userID: user, parentID: parent)
            case 8: return .addMembers(cid: cid, userIDs: [user])
            default: return next(3) == 0 ? .removeMembers(cid: cid, userIDs: [user]) : .markDelivered(userID: user, latest: [DeliveredTarget(cid: cid, messageID: some)])
            }
        }
    }

    /// Users and channels, committed.
    static func setUp(_ store: any ReceiptsStore, engine: inout ReceiptsEngine, seq: inout Int64) throws {
        let setup: [ReceiptsCommand] = users.map { .upsertUser(User(id: $0)) }
            + cids.map { .createChannel(cid: $0, createdBy: "u0", members: Array(users.prefix(3))) }
        try StorageRoundTripTests.applyAndCommit(setup, to: store, engine: &engine, seq: &seq)
    }

    /// Applies `count` commands of `history`, committing them in groups of 1 to 8 (one batch each, as
    /// a group commit does).
    static func run(_ history: inout History, count: Int, store: any ReceiptsStore, engine: inout ReceiptsEngine, seq: inout Int64,
                    now: inout Int64) throws {
        var entries: [JournalEntry] = []
        var footprint = StateFootprint()
        var group = 1 + history.next(8)
        for number in 0..<count {
            now += 1_000_000
            let command = history.command(in: engine, number: Int(now / 1_000_000) * 100 + number)
            if case .success(let outcome) = engine.apply(command, at: Timestamp(rawValue: now)), outcome.changed, ReceiptsEngine.isDurable(command) {
                seq += 1
                entries.append(JournalEntry(seq: seq, at: engine.clock, command: command, events: []))
            }
            engine.takeFootprint(into: &footprint)
            group -= 1
            if group == 0 || number == count - 1 {
                let batch = CommitBatch(entries: entries, footprint: footprint, engine: engine)
                try store.commit(batch)
                engine.markMessagesDurable(batch.storedMessageCounts)
                entries = []
                footprint = StateFootprint()
                group = 1 + history.next(8)
            }
        }
    }

    /// Every member's unread count equals a recount from its read pointer, and every participant's
    /// unread replies a recount of the replies after its thread pointer.
    static func expectCountsAreRecounts(_ engine: ReceiptsEngine, _ comment: Comment) {
        for channel in engine.channels.values {
            for (userID, member) in channel.members {
                #expect(member.read.unreadMessages == channel.countUnread(for: userID, from: member.read.readPosition), comment)
            }
            for thread in channel.threads.values {
                #expect(thread.countableReplies == thread.replyPositions.filter { !channel.messages.isSilent(at: $0) }.count, comment)
                for (userID, read) in thread.reads {
                    let recount = thread.replyPositions.dropFirst(read.readCount).filter { channel.messages.countsAsUnreadReply(at: $0, for: userID) }.count
                    #expect(read.unreadReplies == recount, comment)
                }
            }
        }
    }

    @Test(arguments: StoreKind.available) func countsLoadedAfterAnyHistoryEqualARecount(kind: StoreKind) throws {
        for seed in 1...6 {
            let location = try kind.makeLocation()
            defer { location.remove() }
            var engine = ReceiptsEngine()
            var seq: Int64 = 0
            var now: Int64 = 1_763_000_000_000_000
            var history = History(state: 0x9E37_79B9_7F4A_7C15 &* UInt64(seed))
            do {
                let store = try location.open()
                defer { store.close() }
                try Self.setUp(store, engine: &engine, seq: &seq)
                try Self.run(&history, count: 120, store: store, engine: &engine, seq: &seq, now: &now)
            }
            // Twice: the second time from counts written by an engine that was itself restored.
            for round in 0..<2 {
                let store = try location.open()
                defer { store.close() }
                let restored = ReceiptsEngine(restoring: try store.load().snapshot)
                #expect(fingerprint(restored) == fingerprint(engine), "seed \(seed), round \(round)")
                Self.expectCountsAreRecounts(restored, "seed \(seed), round \(round)")
                engine = restored
                try Self.run(&history, count: 60, store: store, engine: &engine, seq: &seq, now: &now)
            }
        }
    }

    /// The counts a load gives are the stored ones, brought forward by the countable messages since
    /// the row was written (not recounted from the messages).
    @Test(arguments: StoreKind.available) func aLoadTakesTheStoredCountForwardWithoutRecounting(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        let cid = Self.cids[0]
        do {
            let store = try location.open()
            defer { store.close() }
            try Self.setUp(store, engine: &engine, seq: &seq)
            try StorageRoundTripTests.applyAndCommit([
                .sendMessage(cid: cid, userID: "u0", draft: MessageDraft(id: "a", text: "1")),
                .sendMessage(cid: cid, userID: "u0", draft: MessageDraft(id: "b", text: "2")),
                .markRead(cid: cid, userID: "u1", messageID: "a"),
                .sendMessage(cid: cid, userID: "u0", draft: MessageDraft(id: "c", text: "3")),
            ], to: store, engine: &engine, seq: &seq)
        }
        #expect(engine.channels[cid]!.members["u1"]!.read.unreadMessages == 2)
        // u1's row says 1 unread of 2 countable messages, and one came since (2 in all). Stored as 0
        // instead, a load that takes it forward says 1; a recount would still say 2.
        try location.execute("UPDATE members SET unread_messages = 0 WHERE user_id = 'u1' AND cid = '\(cid)'")
        let store = try location.open()
        defer { store.close() }
        let loaded = try store.load().snapshot.channels.first { $0.cid == cid }
        #expect(loaded?.members["u1"]?.read.unreadMessages == 1)
        #expect(loaded?.members["u2"]?.read.unreadMessages == 3)
    }

    @Test(arguments: StoreKind.available) func storedCountsThatDoNotAddUpAreReportedCorrupt(kind: StoreKind) throws {
        for damage in ["UPDATE messages SET countable_before = countable_before + 1 WHERE position = 1",
                       "UPDATE members SET countable_seen = 99 WHERE user_id = 'u1'",
                       "UPDATE members SET unread_messages = -1 WHERE user_id = 'u1'",
                       "UPDATE threads SET countable_replies = 2",
                       "DELETE FROM threads",
                       "UPDATE thread_reads SET replies_seen = 5",
                       "UPDATE thread_reads SET unread_replies = 3"] {
            let location = try kind.makeLocation()
            defer { location.remove() }
            var engine = ReceiptsEngine()
            var seq: Int64 = 0
            do {
                let store = try location.open()
                defer { store.close() }
                try Self.setUp(store, engine: &engine, seq: &seq)
                try StorageRoundTripTests.applyAndCommit((0..<3).map {
                    .sendMessage(cid: Self.cids[0], userID: "u0", draft: MessageDraft(id: "m\($0)", text: "t"))
                } + [.sendMessage(cid: Self.cids[0], userID: "u1", draft: MessageDraft(id: "r", text: "reply", parentID: "m0"))],
                to: store, engine: &engine, seq: &seq)
            }
            try location.execute(damage)
            let store = try location.open()
            defer { store.close() }
            #expect(Comment(rawValue: damage)) {
                _ = try store.load()
            } throws: { error in
                guard case StorageError.corrupt = error else { return false }
                return "\(error)".contains("countable") && "\(error)".contains(kind == .sqlite ? "checkmark.sqlite" : "schema=")
            }
        }
    }

    /// A database of schema v6 (no stored counts) is counted by the v7 migration: the counts it loads
    /// afterwards are those the engine had, and the engine goes on from them alike.
    @Test(arguments: StoreKind.available) func aDatabaseOfTheFormerSchemaGetsItsCountsOnMigration(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        var now: Int64 = 1_763_000_000_000_000
        var history = History(state: 0xDEAD_BEEF_1234_5678)
        do {
            let store = try location.open()
            defer { store.close() }
            try StorageRoundTripTests.applyAndCommit(StorageRoundTripTests.history, to: store, engine: &engine, seq: &seq)
            try Self.setUp(store, engine: &engine, seq: &seq)
            try Self.run(&history, count: 150, store: store, engine: &engine, seq: &seq, now: &now)
        }
        #expect(engine.channels.values.contains { $0.threads.values.contains { $0.reads.values.contains { $0.unreadReplies > 0 } } },
                "the history leaves unread replies to count")
        // Back to v6: the columns and table of v7 and v8 gone, their migrations not applied.
        switch kind {
        case .sqlite:
            try location.execute("""
                ALTER TABLE messages DROP COLUMN countable_before;
                ALTER TABLE members DROP COLUMN unread_messages;
                ALTER TABLE members DROP COLUMN countable_seen;
                DROP TABLE threads;
                ALTER TABLE thread_reads DROP COLUMN unread_replies;
                ALTER TABLE thread_reads DROP COLUMN replies_seen;
                DELETE FROM grdb_migrations WHERE identifier IN ('v7-stored-unread-counts', 'v8-stored-thread-counts');
                """)
        case .postgres:
            try location.execute("""
                ALTER TABLE messages DROP COLUMN countable_before;
                ALTER TABLE members DROP COLUMN unread_messages, DROP COLUMN countable_seen;
                DROP TABLE threads;
                ALTER TABLE thread_reads DROP COLUMN unread_replies, DROP COLUMN replies_seen;
                DELETE FROM checkmark_migrations WHERE id IN ('v7-stored-unread-counts', 'v8-stored-thread-counts');
                """)
        }
        let store = try location.open()
        defer { store.close() }
        var restored = ReceiptsEngine(restoring: try store.load().snapshot)
        #expect(fingerprint(restored) == fingerprint(engine))
        Self.expectCountsAreRecounts(restored, "migrated")
        try Self.run(&history, count: 60, store: store, engine: &restored, seq: &seq, now: &now)
        #expect(fingerprint(ReceiptsEngine(restoring: try store.load().snapshot)) == fingerprint(restored))
    }
}

extension TestStoreLocation {
    /// Runs `sql` on the stored tables directly (SQLite's file, or the PostgreSQL schema through `psql`).
    func execute(_ sql: String) throws {
        switch self {
        case .sqlite(let directory):
            let queue = try DatabaseQueue(path: directory.path + "/checkmark.sqlite")
            try queue.write { db in try db.execute(sql: sql) }
            try queue.close()
        case .postgres(let location):
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            let path = location.schema.map { "SET search_path TO \"\($0)\"; " } ?? ""
            process.arguments = ["psql", "-q", "-v", "ON_ERROR_STOP=1", StoreKind.postgresURL!, "-c", path + sql]
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "psql: \(sql)")
        }
    }
}
