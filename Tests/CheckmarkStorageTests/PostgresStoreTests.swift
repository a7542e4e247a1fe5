import CheckmarkCore
@testable import CheckmarkStorage
import Foundation
import Logging
import Synchronization
import Testing

/// Issue 10: the PostgreSQL store refuses clearly, and several nodes appending to one journal keep one
/// gap-free order that every node's engine follows.
@Suite("PostgreSQL store")
struct PostgresStoreTests {
    static let general = ChannelCID(type: "messaging", id: "general")

    @Test func malformedURLIsRefusedWithoutItsPassword() {
        #expect {
            _ = try PostgresLocation(url: "mysql://user:secret@host/db")
        } throws: { error in
            "\(error)".contains("postgres://user:password@host") && !"\(error)".contains("secret")
        }
        #expect(throws: StorageError.self) { _ = try PostgresLocation(url: "postgres://user@host/db?schema=Bad-Name") }
        #expect(throws: StorageError.self) { _ = try PostgresLocation(url: "postgres:///db") }
    }

    @Test func migrationStatementsSplitAtSemicolonsOutsideFunctionBodies() {
        let sql = """
            CREATE TABLE t (a INTEGER);
            CREATE FUNCTION f() RETURNS INTEGER LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM 1; RETURN 2;
            END
            $$;
            INSERT INTO t VALUES (1);
            """
        let statements = PostgresSchema.statements(sql).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(statements.count == 3)
        #expect(statements.first == "CREATE TABLE t (a INTEGER)")
        #expect(statements[1].hasPrefix("CREATE FUNCTION f()") && statements[1].hasSuffix("END\n$$"))
        #expect(statements.last == "INSERT INTO t VALUES (1)")
    }

    @Test func urlPartsAndDefaults() throws {
        let location = try PostgresLocation(url: "postgresql://ck:p%40ss@db.internal/receipts?schema=eu_1")
        #expect(location.host == "db.internal")
        #expect(location.port == 5432)
        #expect(location.username == "ck")
        #expect(location.password == "p@ss")
        #expect(location.database == "receipts")
        #expect(location.schema == "eu_1")
        #expect(location.description == "postgres://ck@db.internal:5432/receipts?schema=eu_1")
    }

    @Test func unreachableServerIsRefusedNamingIt() throws {
        let location = try PostgresLocation(url: "postgres://checkmark:x@127.0.0.1:1/checkmark")
        #expect {
            _ = try PostgresStore(location: location, logger: Logger(label: "test"))
        } throws: { error in
            guard case StorageError.unavailable(let reason) = error else { return false }
            return reason.contains("cannot connect to postgres://checkmark@127.0.0.1:1/checkmark")
        }
    }

    @Test func droppingTheDefaultSchemaIsRefused() throws {
        let location = try PostgresLocation(url: "postgres://checkmark:x@127.0.0.1:1/checkmark")
        #expect {
            try PostgresStore.dropSchema(of: location, logger: Logger(label: "test"))
        } throws: { error in
            guard case StorageError.unavailable(let reason) = error else { return false }
            return reason.contains("names no schema to drop")
        }
    }

    @Test(.enabled(if: StoreKind.postgresURL != nil)) func droppedSchemaTakesItsRowsWithIt() throws {
        let location = try StoreKind.postgres.makeLocation()
        defer { location.remove() }
        guard case .postgres(let postgres) = location else { return }
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        do {
            let store = try location.open()
            try StorageRoundTripTests.applyAndCommit([.upsertUser(User(id: "alice"))], to: store, engine: &engine, seq: &seq)
            store.close()
        }
        try PostgresStore.dropSchema(of: postgres, logger: Logger(label: "test"))
        let reopened = try location.open()
        defer { reopened.close() }
        #expect(try reopened.load().lastSeq == 0)
        #expect(try reopened.load().snapshot.users.isEmpty)
    }

    /// Regression (scale-check, four nodes started at once): one node failed to start with "duplicate
    /// key value violates unique constraint pg_namespace_nspname_index", having lost the race to
    /// create the schema.
    @Test(.enabled(if: StoreKind.postgresURL != nil)) func nodesStartingTogetherOnANewSchemaAllStart() throws {
        let location = try StoreKind.postgres.makeLocation()
        defer { location.remove() }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do {
                try location.open().close()
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
    }

    @Test(.enabled(if: StoreKind.postgresURL != nil)) func schemaFromANewerBinaryIsRefused() throws {
        let location = try StoreKind.postgres.makeLocation()
        defer { location.remove() }
        guard case .postgres(let postgres) = location else { return }
        let store = try PostgresStore(location: postgres, logger: Logger(label: "test"))
        store.close()
        // A newer binary left a migration this one does not know.
        try markNewerMigration(schema: postgres.schema!)
        #expect {
            _ = try PostgresStore(location: postgres, logger: Logger(label: "test"))
        } throws: { error in
            guard case StorageError.schemaNewer(_, let unknown) = error else { return false }
            return unknown == ["v99-from-the-future"]
        }
    }

    /// Issue 45: PostgreSQL kept a member's pointer passes as blobs in its row, rewritten whole by
    /// every confirmation; migration v10 moves them to rows of their own. A database as an older
    /// binary left it (passes in the rows, no `pointer_passes`) loads the same state after it.
    @Test(.enabled(if: StoreKind.postgresURL != nil)) func passesKeptInMemberRowsMoveToRowsOfTheirOwn() throws {
        let location = try StoreKind.postgres.makeLocation()
        defer { location.remove() }
        guard case .postgres(let postgres) = location else { return }
        let node = Node(store: try location.open() as! PostgresStore)
        try node.append([
            .upsertUser(User(id: "alice")), .upsertUser(User(id: "bob")), .upsertUser(User(id: "carol")),
            .createChannel(cid: Self.general, createdBy: "alice", members: ["alice", "bob", "carol"]),
        ] + (1...6).map { .sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "m\($0)", text: "text \($0)")) })
        try node.append([.markRead(cid: Self.general, userID: "bob", messageID: "m2")])
        try node.append([.markDelivered(userID: "carol", latest: [DeliveredTarget(cid: Self.general, messageID: "m4")])])
        try node.append([.markRead(cid: Self.general, userID: "bob", messageID: "m6"), .markRead(cid: Self.general, userID: "carol", messageID: "m5")])
        let expected = fingerprint(node.engine)
        let members = try #require(node.engine.channels[Self.general]?.members)
        #expect(members.values.contains { $0.read.readPasses.count >= 2 }, "the test needs members with several passes")
        node.store.close()

        // As an older binary left it: each member's passes in its row, no table of passes.
        let blobUpdates = members.map { userID, member in
            let read = StoredPasses.encode(member.read.readPasses).map { String(format: "%02x", $0) }.joined()
            let delivered = StoredPasses.encode(member.read.deliveredPasses).map { String(format: "%02x", $0) }.joined()
            return "UPDATE members SET read_passes = '\\x\(read)'::bytea, delivered_passes = '\\x\(delivered)'::bytea WHERE user_id = '\(userID)'"
        }
        try runPSQL(["SET search_path TO \(postgres.schema!)"] + blobUpdates
            + ["DROP TABLE pointer_passes", "DELETE FROM checkmark_migrations WHERE id = 'v10-pointer-passes-as-rows'"])

        let migrated = try location.open()
        defer { migrated.close() }
        #expect(fingerprint(ReceiptsEngine(restoring: try migrated.load().snapshot)) == expected)

        // An older binary still running during the upgrade writes passes into the member rows
        // again: the rows of `pointer_passes` are the passes, and those columns are not read.
        try runPSQL(["SET search_path TO \(postgres.schema!)"] + blobUpdates)
        #expect(fingerprint(ReceiptsEngine(restoring: try migrated.load().snapshot)) == expected)
    }

    /// Issue 45 (migration v12): the entries a journal held before streams are the cluster stream's,
    /// numbered as in the journal, and the stream goes on from there.
    @Test(.enabled(if: StoreKind.postgresURL != nil)) func entriesFromBeforeStreamsAreTheClusterStreams() throws {
        let location = try StoreKind.postgres.makeLocation()
        defer { location.remove() }
        guard case .postgres(let postgres) = location else { return }
        let node = Node(store: try location.open() as! PostgresStore)
        try node.append([
            .upsertUser(User(id: "alice")), .upsertUser(User(id: "bob")),
            .createChannel(cid: Self.general, createdBy: "alice", members: ["alice", "bob"]),
        ])
        node.store.close()
        // As an older binary left it: no stream columns.
        try runPSQL(["SET search_path TO \(postgres.schema!)", "DROP INDEX journal_stream",
                     "ALTER TABLE journal DROP COLUMN stream, DROP COLUMN stream_seq",
                     "DELETE FROM checkmark_migrations WHERE id = 'v12-journal-streams'"])

        let migrated = try location.open()
        defer { migrated.close() }
        let journal = try migrated.journal(after: 0, limit: 10)
        #expect(journal.map(\.stream) == [.cluster, .cluster, .cluster])
        #expect(journal.map(\.streamSeq) == journal.map(\.seq))
        #expect(try migrated.load().streamSeqs[JournalStream.cluster.rawValue] == 3)
    }

    /// Issue 45: a node's ledger of stored passes is a lower bound; another node rewrites a channel's
    /// members (deleting their pass rows, removing a member and adding it again), and the passes this
    /// node writes afterwards are stored as its engine holds them.
    @Test(.enabled(if: StoreKind.postgresURL != nil)) func passesOfAMemberAnotherNodeRemovedAndAddedAreStoredAsHeld() throws {
        let location = try StoreKind.postgres.makeLocation()
        defer { location.remove() }
        let nodes = try (0..<2).map { _ in Node(store: try location.open() as! PostgresStore) }
        defer { nodes.forEach { $0.store.close() } }
        try nodes[0].append([
            .upsertUser(User(id: "alice")), .upsertUser(User(id: "bob")),
            .createChannel(cid: Self.general, createdBy: "alice", members: ["alice", "bob"]),
        ] + (1...3).map { .sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "m\($0)", text: "text \($0)")) })
        try nodes[0].append([.markRead(cid: Self.general, userID: "bob", messageID: "m3")])
        try nodes[1].append([.removeMembers(cid: Self.general, userIDs: ["bob"])])
        try nodes[1].append([.addMembers(cid: Self.general, userIDs: ["bob"])])
        try nodes[0].append([.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "m4", text: "text 4"))])
        try nodes[0].append([.markRead(cid: Self.general, userID: "bob", messageID: "m4")])
        let bob = try #require(nodes[0].engine.channels[Self.general]?.members["bob"])
        #expect(!bob.read.readPasses.isEmpty, "the test needs bob to have passes again")
        let reader = try location.open()
        defer { reader.close() }
        #expect(fingerprint(ReceiptsEngine(restoring: try reader.load().snapshot)) == fingerprint(nodes[0].engine))
    }

    /// Two nodes (two stores, two engines) append concurrently to one journal, each applying what the
    /// other committed before its own commands, as the service does.
    @Test(.enabled(if: StoreKind.postgresURL != nil)) func concurrentAppendsFromTwoNodesStayGapFreeAndAgree() throws {
        let location = try StoreKind.postgres.makeLocation()
        defer { location.remove() }
        let setup: [ReceiptsCommand] = [
            .upsertUser(User(id: "alice")), .upsertUser(User(id: "bob")),
            .createChannel(cid: Self.general, createdBy: "alice", members: ["alice", "bob"]),
        ]
        let nodes = try (0..<2).map { _ in Node(store: try location.open() as! PostgresStore) }
        try nodes[0].append(setup)
        let failures = Mutex<[String]>([])
        let threads = nodes.enumerated().map { index, node in
            Thread {
                do {
                    for round in 0..<40 {
                        let user = index == 0 ? "alice" : "bob"
                        try node.append([
                            .sendMessage(cid: Self.general, userID: user, draft: MessageDraft(id: "n\(index)-\(round)", text: "x")),
                            .markRead(cid: Self.general, userID: user == "alice" ? "bob" : "alice", messageID: nil),
                        ])
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        threads.forEach { $0.start() }
        while threads.contains(where: { !$0.isFinished }) { Thread.sleep(forTimeInterval: 0.01) }
        #expect(failures.withLock { $0 } == [])
        for node in nodes { try node.catchUp() }
        let reader = try location.open()
        let entries = try reader.journal(after: 0, limit: 10_000)
        #expect(entries.map(\.seq) == Array(1...Int64(entries.count)))
        #expect(entries.count == 3 + 2 * 40 * 2)
        let loaded = ReceiptsEngine(restoring: try reader.load().snapshot)
        #expect(fingerprint(nodes[0].engine) == fingerprint(loaded))
        #expect(fingerprint(nodes[1].engine) == fingerprint(loaded))
        // Channel sequences are gap-free too.
        let channelSeqs = entries.flatMap(\.events).compactMap(\.channelSeq)
        #expect(channelSeqs == Array(1...Int64(channelSeqs.count)))
        reader.close()
        nodes.forEach { $0.store.close() }
    }

    @Test(.enabled(if: StoreKind.postgresURL != nil)) func anAppendReadsWhatWasCommittedBeforeItsLockWasGranted() throws {
        let location = try StoreKind.postgres.makeLocation()
        defer { location.remove() }
        let nodes = try (0..<2).map { _ in Node(store: try location.open() as! PostgresStore) }
        try nodes[0].append([
            .upsertUser(User(id: "alice")), .upsertUser(User(id: "bob")),
            .createChannel(cid: Self.general, createdBy: "alice", members: ["alice", "bob"]),
        ])
        try nodes[1].catchUp()
        // Node 0 holds the lock shared while it builds its batch; node 1 asks for it exclusively
        // meanwhile: its read must come after node 0's commit, so it applies that send before its own.
        let locked = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let holder = Thread {
            do {
                try nodes[0].append([.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "while-locked", text: "first"))],
                                    exclusively: false) {
                    locked.signal()
                    Thread.sleep(forTimeInterval: 0.3)
                }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
        }
        holder.start()
        locked.wait()
        try nodes[1].append([.sendMessage(cid: Self.general, userID: "bob", draft: MessageDraft(id: "after", text: "second"))])
        while !holder.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        #expect(failure.withLock { $0 } == nil)
        let messages = try #require(nodes[1].engine.channels[Self.general]?.messages)
        #expect(messages.indices.map { messages.id(at: $0) } == ["while-locked", "after"])
        #expect(messages.text(at: 0) == "first")
        nodes.forEach { $0.store.close() }
    }

    @Test(.enabled(if: StoreKind.postgresURL != nil)) func otherNodesHearOfEveryCommit() throws {
        let location = try StoreKind.postgres.makeLocation()
        defer { location.remove() }
        let writer = Node(store: try location.open() as! PostgresStore)
        let listening = try location.open() as! PostgresStore
        let heard = Mutex<[Int64]>([])
        let peerMessages = Mutex<[String]>([])
        listening.startListening(onAppend: { seq in heard.withLock { $0.append(seq) } },
                                 onPeerMessage: { message in peerMessages.withLock { $0.append(message) } })
        // The first call (0) says the notification connection is up.
        let deadline = Date().addingTimeInterval(10)
        while heard.withLock({ $0.isEmpty }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        try writer.append([.upsertUser(User(id: "alice"))])
        try writer.append([.upsertUser(User(id: "bob")), .upsertUser(User(id: "carol"))])
        while heard.withLock({ $0.count < 3 }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(heard.withLock { $0 } == [0, 1, 3])
        try writer.store.notifyPeers("hello from the writer")
        while peerMessages.withLock({ $0.isEmpty }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(peerMessages.withLock { $0 } == ["hello from the writer"])
        #expect(throws: StorageError.self) { try writer.store.notifyPeers(String(repeating: "x", count: 8_000)) }
        listening.close()
        writer.store.close()
    }
}

/// One node of a test cluster: an engine kept in step with the shared journal.
private final class Node: @unchecked Sendable {
    let store: PostgresStore
    var engine = ReceiptsEngine()
    var seq: Int64 = 0
    var eventSeq: Int64 = 0
    var channelSeqs: [ChannelCID: Int64] = [:]

    init(store: PostgresStore) { self.store = store }

    /// Where this node stands in each stream: every entry it writes is the cluster stream's.
    var applied: [Int64] {
        var positions = Array(repeating: Int64(0), count: JournalStream.count)
        positions[JournalStream.cluster.rawValue] = seq
        return positions
    }

    func apply(_ entry: JournalEntry) throws -> JournalEntry? {
        let outcome = try engine.apply(entry.command, at: entry.at).get()
        guard outcome.changed, ReceiptsEngine.isDurable(entry.command) else { return nil }
        seq += 1
        var events: [JournalEvent] = []
        for event in outcome.events {
            eventSeq += 1
            var channelSeq: Int64?
            if let cid = event.cid {
                channelSeq = (channelSeqs[cid] ?? 0) + 1
                channelSeqs[cid] = channelSeq
            }
            events.append(JournalEvent(seq: eventSeq, cid: event.cid, channelSeq: channelSeq, type: event.type, audience: event.audience, json: Array("{}".utf8)))
        }
        return JournalEntry(seq: seq, at: engine.clock, command: entry.command, events: events)
    }

    /// Commits `commands` holding the append lock as `exclusively` says; `whileLocked` runs once the
    /// lock is held and what others committed before is read.
    func append(_ commands: [ReceiptsCommand], exclusively: Bool = true, whileLocked: () -> Void = {}) throws {
        try store.append(after: applied, exclusively: exclusively) { others in
            whileLocked()
            for entry in others { _ = try self.apply(entry) }
            var footprint = StateFootprint()
            var entries: [JournalEntry] = []
            for command in commands {
                let now = Timestamp(rawValue: Int64(Date().timeIntervalSince1970 * 1_000_000))
                if let entry = try self.apply(JournalEntry(seq: 0, at: now, command: command, events: [])) {
                    entries.append(entry)
                    self.engine.takeFootprint(into: &footprint)
                }
            }
            return CommitBatch(entries: entries, footprint: footprint, engine: self.engine)
        }
    }

    func catchUp() throws {
        for entry in try store.commands(after: applied, limit: 100_000) { _ = try apply(entry) }
    }
}

/// Runs `statements` in one psql session on the test database.
private func runPSQL(_ statements: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["psql", "-q", "-v", "ON_ERROR_STOP=1", StoreKind.postgresURL!, "-c", statements.joined(separator: "; ")]
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
}

/// Records a migration no released binary has, as a newer Checkmark would.
private func markNewerMigration(schema: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["psql", "-q", StoreKind.postgresURL!, "-c", "INSERT INTO \(schema).checkmark_migrations (id) VALUES ('v99-from-the-future')"]
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
}
