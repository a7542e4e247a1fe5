import CheckmarkCore
import Foundation
import Logging
import NIOCore
import NIOConcurrencyHelpers
import NIOPosix
import PostgresNIO
import Synchronization

/// The shared store of a cluster: one PostgreSQL database holding the same state and journal as the
/// SQLite store, for any number of Checkmark nodes. Commits are durable when PostgreSQL says so
/// (`synchronous_commit` as the server sets it: on by default). Appends to the journal are ordered by
/// an advisory lock held only for the length of one group commit (see ``SharedReceiptsStore``); every
/// commit notifies the others on ``PostgresSchema/notifyChannel(schema:)`` with its last sequence, a pointer of
/// a few bytes whatever the batch's size (PostgreSQL's payload limit is 8,000 bytes), and each node
/// fetches what it has not applied. Calls are blocking and come from one writer thread.
package final class PostgresStore: SharedReceiptsStore {
    package let location: PostgresLocation
    private let group: MultiThreadedEventLoopGroup
    /// The writer's connection: replaced by ``reopen()`` after a failure.
    private let writerConnection: Mutex<PostgresConnection>
    private var connection: PostgresConnection { writerConnection.withLock { $0 } }
    private let logger: Logger
    private let state = Mutex(StoreState.open)
    private let listener = Mutex<PostgresConnection?>(nil)
    /// The journal reader's connection (``channelEvents(_:after:through:limit:maxBytes:)``), apart from
    /// the writer's so that a replay's reads run beside commits, never inside their transactions.
    /// Opened at its first use, and again after it was lost.
    private let reader = Mutex<PostgresConnection?>(nil)
    /// Which passes this node knows to be rows already: a lower bound (other nodes append too),
    /// taken from each load, advanced by this node's commits once they are durable.
    private let passLedger = Mutex(PassLedger(stored: []))
    /// How the writer's session numbers what it commits: its slot, taken with the session.
    private let numbering = Mutex(JournalNumbering.alone)
    /// Set when a statement timed out and the connection was closed: nothing more is sent on it.
    private let connectionLost = NIOLockedValueBox(false)
    private let notifyChannel: String
    private let peerChannel: String
    package static let maxPeerMessageBytes = 7_900

    private enum StoreState { case open, failed, closed }

    /// How long one statement may take before the store gives up on the database.
    static let statementTimeout = TimeAmount.seconds(10)
    /// Seconds between attempts to re-open a lost notification connection.
    static let listenRetrySeconds: Int64 = 1

    /// How long the writer's session may sit inside a transaction without sending anything before
    /// PostgreSQL ends it (`idle_in_transaction_session_timeout`): a node paused in the middle of a
    /// commit (SIGSTOP, a long stall) would otherwise hold the journal's append lock, and every other
    /// node would wait for it. Its commit then fails, and the node reloads when it runs again.
    package let stalledTransactionTimeout: TimeAmount
    static let defaultStalledTransactionTimeout = TimeAmount.seconds(5)

    /// Connects and applies pending migrations.
    /// - Throws: ``StorageError/unavailable(reason:)`` when the database cannot be reached or logged
    ///   into, ``StorageError/schemaNewer(path:unknownMigrations:)`` when a newer binary migrated it.
    package init(location: PostgresLocation, logger: Logger,
                 stalledTransactionTimeout: TimeAmount = PostgresStore.defaultStalledTransactionTimeout) throws(StorageError) {
        self.location = location
        self.logger = logger
        self.stalledTransactionTimeout = stalledTransactionTimeout
        notifyChannel = PostgresSchema.notifyChannel(schema: location.schema)
        peerChannel = PostgresSchema.peerChannel(schema: location.schema)
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            writerConnection = Mutex(try PostgresConnection.connect(
                on: group.next(), configuration: Self.configuration(location), id: 1, logger: logger).wait())
        } catch {
            try? group.syncShutdownGracefully()
            throw .unavailable(reason: "cannot connect to \(location): \(Self.describe(error))")
        }
        do {
            try configureSession()
            try migrate()
            try takeNumberingSlot()
        } catch {
            close()
            throw error
        }
    }

    /// The `application_name` PostgreSQL shows for this store's sessions (`pg_stat_activity`):
    /// `checkmark`, plus the schema when there is one.
    static func applicationName(_ location: PostgresLocation) -> String {
        "checkmark" + (location.schema.map { " " + $0 } ?? "")
    }

    static func configuration(_ location: PostgresLocation) -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database, tls: .disable)
        configuration.options.additionalStartupParameters = [("application_name", applicationName(location))]
        return configuration
    }

    /// PostgreSQL's own message when there is one (`PSQLError` hides it from `description`).
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return "\(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }

    /// Bounds the writer session's stalls (``stalledTransactionTimeout``), creates the location's
    /// schema if needed and makes it the connection's first. Nodes starting together create it once:
    /// `CREATE SCHEMA IF NOT EXISTS` alone is not safe against a concurrent one (the loser fails on
    /// `pg_namespace`'s unique index), so it runs under an advisory lock named after the schema.
    private func configureSession() throws(StorageError) {
        do {
            try run("SET idle_in_transaction_session_timeout = \(max(1, stalledTransactionTimeout.nanoseconds / 1_000_000))")
        } catch {
            throw .unavailable(reason: "cannot configure the session on \(location): \(Self.describe(error))")
        }
        guard let schema = location.schema else { return }
        do {
            var name = PostgresBindings()
            name.append("checkmark-schema:" + schema)
            try run("BEGIN")
            do {
                try run("SELECT pg_advisory_xact_lock(hashtext($1))", name)
                try run("CREATE SCHEMA IF NOT EXISTS \"\(schema)\"")
                try run("COMMIT")
            } catch {
                _ = try? run("ROLLBACK")
                throw error
            }
            try run("SET search_path TO \"\(schema)\"")
        } catch {
            throw .unavailable(reason: "cannot use schema \(schema) of \(location): \(Self.describe(error))")
        }
    }

    /// Takes a numbering slot for the writer's session (held until the session ends): the first of
    /// ``PostgresSchema/numberingSlots`` no other session holds.
    /// - Throws: ``StorageError/unavailable(reason:)`` when every slot is held.
    private func takeNumberingSlot() throws(StorageError) {
        let slots = PostgresSchema.numberingSlots
        let taken: Int64?
        do {
            taken = try run("""
                SELECT slot FROM generate_series(0, \(slots - 1)) AS slot
                WHERE pg_try_advisory_lock(\(PostgresSchema.numberingSlotLock), slot::int) LIMIT 1
                """).first.map { try $0.decode(Int64.self) }
        } catch {
            throw .unavailable(reason: "cannot take a numbering slot on \(location): \(Self.describe(error))")
        }
        guard let slot = taken else {
            throw .unavailable(reason: "all \(slots) numbering slots of \(location) are held: at most that many nodes commit to one schema")
        }
        numbering.withLock { $0 = JournalNumbering(stride: slots, slot: slot) }
    }

    private func migrate() throws(StorageError) {
        do {
            _ = try run("SELECT pg_advisory_lock(\(PostgresSchema.migrationLock))")
            defer { _ = try? run("SELECT pg_advisory_unlock(\(PostgresSchema.migrationLock))") }
            _ = try run("CREATE TABLE IF NOT EXISTS checkmark_migrations (id TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
            let applied = Set(try run("SELECT id FROM checkmark_migrations").map { try $0.decode(String.self) })
            let known = Set(PostgresSchema.migrations.map(\.id))
            let unknown = applied.subtracting(known)
            if !unknown.isEmpty { throw StorageError.schemaNewer(path: location.description, unknownMigrations: unknown.sorted()) }
            for migration in PostgresSchema.migrations where !applied.contains(migration.id) {
                _ = try run("BEGIN")
                do {
                    for statement in PostgresSchema.statements(migration.sql) {
                        _ = try run(statement)
                    }
                    var binds = PostgresBindings()
                    binds.append(migration.id)
                    _ = try run("INSERT INTO checkmark_migrations (id) VALUES ($1)", binds)
                    _ = try run("COMMIT")
                } catch {
                    _ = try? run("ROLLBACK")
                    throw error
                }
                logger.info("applied migration", metadata: ["migration": "\(migration.id)", "database": "\(location)"])
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw .unavailable(reason: "migrating \(location): \(Self.describe(error))")
        }
    }

    /// Runs one statement and waits for all its rows.
    @discardableResult
    private func run(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> [PostgresRow] {
        let connection = self.connection
        // A query on a connection the database closed is never answered (the client library leaves it
        // waiting): it fails now instead of after the statement timeout.
        guard !connection.isClosed else { throw StorageError.unavailable(reason: "the connection to \(location) is closed") }
        return try wait(connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)).rows
    }

    /// Waits for `future` at most ``statementTimeout``; past it the connection is closed (a database
    /// that stopped answering, or a connection the client library lost track of) and the call throws.
    private func wait<Value: Sendable>(_ future: EventLoopFuture<Value>) throws -> Value {
        let lost = connectionLost
        return try Self.wait(future, closingOnTimeout: connection) { lost.withLockedValue { $0 = true } }
    }

    /// A new connection to `location` on `loop`, waiting for it as ``wait(_:closingOnTimeout:timedOut:)``
    /// does; one given up on (a silent database) is closed if it connects after all, never dropped
    /// (the client library asserts that a connection is closed before it is released).
    static func connect(_ location: PostgresLocation, on loop: any EventLoop, id: Int, logger: Logger) throws -> PostgresConnection {
        let connecting = PostgresConnection.connect(on: loop, configuration: configuration(location), id: id, logger: logger)
        do {
            return try wait(connecting, closingOnTimeout: nil)
        } catch {
            connecting.whenSuccess { $0.closeInBackground() }
            throw error
        }
    }

    /// Waits for `future` at most ``statementTimeout``; past it `connection` (if any) is closed,
    /// `timedOut` is called and the call throws.
    static func wait<Value: Sendable>(_ future: EventLoopFuture<Value>, closingOnTimeout connection: PostgresConnection?,
                                              timedOut: @escaping @Sendable () -> Void = {}) throws -> Value {
        let loop = future.eventLoop
        let result = loop.makePromise(of: Value.self)
        let settled = NIOLockedValueBox(false)
        let settle: @Sendable (Result<Value, any Error>) -> Void = { outcome in
            guard settled.withLockedValue({ done in defer { done = true }; return !done }) else { return }
            result.completeWith(outcome)
        }
        future.whenComplete(settle)
        let timeout = loop.scheduleTask(in: Self.statementTimeout) {
            timedOut()
            settle(.failure(StorageError.unavailable(reason: "PostgreSQL did not answer within \(Self.statementTimeout.nanoseconds / 1_000_000_000) s")))
            connection?.closeInBackground()
        }
        defer { timeout.cancel() }
        return try result.futureResult.wait()
    }

    package var isReady: Bool { state.withLock { $0 == .open } && !connection.isClosed }

    package func reopen() throws(StorageError) {
        guard state.withLock({ $0 != .closed }) else { throw .closed }
        let fresh: PostgresConnection
        do {
            fresh = try Self.connect(location, on: group.next(), id: 1, logger: logger)
        } catch {
            throw .unavailable(reason: "cannot connect to \(location): \(Self.describe(error))")
        }
        let failed = writerConnection.withLock { current in
            defer { current = fresh }
            return current
        }
        failed.closeInBackground()
        connectionLost.withLockedValue { $0 = false }
        try configureSession()
        try takeNumberingSlot()
        let reading = reader.withLock { current in
            defer { current = nil }
            return current
        }
        reading?.closeInBackground()
        let reopened = state.withLock { current -> Bool in
            guard current != .closed else { return false }
            current = .open
            return true
        }
        guard reopened else { throw .closed }
    }

    deinit { close() }

    package func makeShardLeaseStore() -> any ShardLeaseStore {
        PostgresShardLeases(location: location, logger: logger)
    }

    package func close() {
        let wasOpen = state.withLock { current in
            defer { current = .closed }
            return current != .closed
        }
        guard wasOpen else { return }
        let listening = listener.withLock { current in
            defer { current = nil }
            return current
        }
        try? listening?.close().wait()
        let reading = reader.withLock { current in
            defer { current = nil }
            return current
        }
        try? reading?.close().wait()
        try? connection.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// Deletes the location's schema with every table in it, without opening a store (no
    /// migration): for throwaway schemas (tests, `bench-storage`). Nodes still on the schema fail
    /// at their next statement.
    /// - Throws: ``StorageError/unavailable(reason:)`` when the location names no schema (the role's
    ///   default schema is never dropped), or the database cannot be reached or refuses the drop.
    package static func dropSchema(of location: PostgresLocation, logger: Logger) throws(StorageError) {
        guard let schema = location.schema else { throw .unavailable(reason: "\(location) names no schema to drop") }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        do {
            let connection = try PostgresConnection.connect(
                on: group.next(), configuration: configuration(location), id: 1, logger: logger).wait()
            defer { try? connection.close().wait() }
            _ = try connection.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE"), logger: logger).wait()
        } catch {
            throw .unavailable(reason: "cannot drop schema \(schema) of \(location): \(describe(error))")
        }
    }

    /// The columns of `table` in the store's schema as PostgreSQL describes them (name, data type,
    /// nullable, position in the primary key or nil), in column order: for checking the table
    /// descriptions against the migrated schema.
    func describeColumns(of table: String) throws -> [(name: String, type: String, nullable: Bool, keyPosition: Int?)] {
        var binds = PostgresBindings()
        binds.append(table)
        return try run("""
            SELECT c.column_name::text, c.data_type::text, c.is_nullable = 'YES', k.ordinal_position::bigint
            FROM information_schema.columns c
            LEFT JOIN information_schema.table_constraints t
                ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.constraint_type = 'PRIMARY KEY'
            LEFT JOIN information_schema.key_column_usage k
                ON k.constraint_name = t.constraint_name AND k.table_schema = c.table_schema AND k.column_name = c.column_name
            WHERE c.table_schema = current_schema() AND c.table_name = $1 ORDER BY c.ordinal_position
            """, binds).map { row in
            let (name, type, nullable, key) = try row.decode((String, String, Bool, Int64?).self)
            return (name, type, nullable, key.map(Int.init))
        }
    }

    private func checkOpen() throws(StorageError) {
        let current = state.withLock { $0 }
        guard current == .open else { throw current == .closed ? .closed : .commitFailed(reason: "storage failed earlier") }
    }

    // MARK: Loading

    package func load(messageWindow: Int) throws(StorageError) -> StoredState {
        try checkOpen()
        do {
            // One snapshot: other nodes may be committing meanwhile.
            try run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            defer { _ = try? run("COMMIT") }
            var state = try loadRows(messageWindow: messageWindow)
            try Self.addPasses(PostgresTableBinder(StateTables.postgresPointerPasses).decode(
                run(StateTables.postgresPointerPasses.select("ORDER BY cid, user_id, kind, ordinal"))), to: &state.snapshot.channels)
            passLedger.withLock { $0 = PassLedger(loaded: state.snapshot.channels) }
            state.numbering = numbering.withLock { $0 }
            return state
        } catch let error as StorageError {
            throw error
        } catch {
            throw .unavailable(reason: "loading from \(location): \(Self.describe(error))")
        }
    }

    private func loadRows(messageWindow: Int) throws -> StoredState {
        func load<Row>(_ table: TableDescription<Row>, _ clauses: String? = nil) throws -> [Row] {
            try PostgresTableBinder(table).decode(run(table.select(clauses)))
        }
        var rows = StoredStateAssembly(path: location.description, messageWindow: messageWindow)
        rows.users = try load(StateTables.users, "ORDER BY id")
        rows.channelTypes = try load(StateTables.channelTypes, "ORDER BY name")
        let messages = try PostgresTableBinder(StateTables.messages).decode(run(Self.messagesQuery(window: messageWindow)))
        try Self.add(messages, of: try load(StateTables.channels), to: &rows)
        rows.members = try load(StateTables.members, "ORDER BY cid, position")
        rows.threadReads = try load(StateTables.threadReads)
        rows.threads = try load(StateTables.threads)
        rows.messageEdits = try load(StateTables.messageEdits)
        rows.reactions = try load(StateTables.reactions, "ORDER BY cid, position, created_at, user_id, type")
        rows.counters = try load(StateTables.counters) + run(JournalPositions.select).map { try $0.decode((String, Int64).self) }
        rows.channelSequences = try load(StateTables.channelSequences)
        return try rows.assemble()
    }

    /// The query of `messages` (of the channels `clause` names), archived texts not sent: "" in their
    /// place (the assembly archives the same ones).
    private static func messagesQuery(window: Int, _ clause: String = "") -> String {
        let table = StateTables.messages
        let columns = table.columns.map {
            $0.name == "text"
                ? "CASE WHEN position > max(position) OVER (PARTITION BY cid) - \(Int64(clamping: window)) THEN text ELSE '' END AS text"
                : $0.name
        }
        return "SELECT \(columns.joined(separator: ", ")) FROM \(table.name) \(clause) ORDER BY cid, position"
    }

    /// Sets `channels` and appends `messages` (in cid and position order) to them.
    private static func add(_ messages: [StateTables.MessageRow], of channels: [CheckmarkCore.Channel], to rows: inout StoredStateAssembly) throws {
        var counts: [ChannelCID: Int] = [:]
        for (_, message, _) in messages { counts[message.cid, default: 0] += 1 }
        rows.setChannels(channels, messageCounts: counts)
        for (position, message, countableBefore) in messages { try rows.appendMessage(message, at: position, countableBefore: countableBefore) }
    }

    package func loadDormant() throws(StorageError) -> StoredState {
        try checkOpen()
        do {
            try run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            defer { _ = try? run("COMMIT") }
            // Nothing of any channel's passes is in memory: each channel's are learnt as it loads.
            passLedger.withLock { $0 = PassLedger(stored: []) }
            return try loadDormantRows()
        } catch let error as StorageError {
            throw error
        } catch {
            throw .unavailable(reason: "loading from \(location): \(Self.describe(error))")
        }
    }

    private func loadDormantRows() throws -> StoredState {
        func load<Row>(_ table: TableDescription<Row>, _ clauses: String? = nil) throws -> [Row] {
            try PostgresTableBinder(table).decode(run(table.select(clauses)))
        }
        var rows = StoredStateAssembly(path: location.description)
        rows.users = try load(StateTables.users, "ORDER BY id")
        rows.channelTypes = try load(StateTables.channelTypes, "ORDER BY name")
        rows.setChannels(try load(StateTables.channels), messageCounts: [:])
        var last: [ChannelCID: (position: Int, createdAt: Timestamp, countable: Int)] = [:]
        // The newest message of each channel: one descent of the primary key each.
        for row in try run("""
            SELECT c.cid, m.position, m.created_at, m.countable FROM channels AS c CROSS JOIN LATERAL
                (SELECT position, created_at, \(StoredStateAssembly.countableThroughSQL) AS countable FROM messages
                 WHERE messages.cid = c.cid ORDER BY position DESC LIMIT 1) AS m
            """) {
            let (cid, position, createdAt, countable) = try row.decode((String, Int64, Int64, Int64).self)
            last[try StateTables.cid(cid)] = (Int(position), Timestamp(rawValue: createdAt), Int(countable))
        }
        rows.threadReads = try load(StateTables.threadReads)
        rows.threads = try load(StateTables.threads)
        try rows.beginDormant(lastMessages: last)
        for row in try run("SELECT \(StoredStateAssembly.dormantMemberColumns) FROM members ORDER BY cid, position") {
            let (cid, userID, readPosition, lastRead, unread, seen) = try row.decode((String, String, Int64, Int64, Int64, Int64).self)
            try rows.appendDormantMember(cid: try StateTables.cid(cid), userID: userID, readPosition: readPosition, lastRead: lastRead,
                                         unread: unread, countableSeen: seen)
        }
        rows.counters = try load(StateTables.counters) + run(JournalPositions.select).map { try $0.decode((String, Int64).self) }
        rows.channelSequences = try load(StateTables.channelSequences)
        return rows.assembleDormant()
    }

    package func unloaded(_ cids: [ChannelCID]) {
        passLedger.withLock { $0.forget(cids) }
    }

    /// Puts loaded passes (each member's in order of kind and ordinal) into their members.
    /// - Throws: ``StorageError/corrupt(path:reason:)`` for a pass of no channel or no member, or out of order.
    private static func addPasses(_ passes: [StateTables.OrdinalPassRow], to channels: inout [CheckmarkCore.Channel]) throws(StorageError) {
        // The rows are the passes: what a member row's old pass columns hold (an older binary still
        // running during an upgrade writes them) is not read.
        for index in channels.indices {
            for member in channels[index].members.indices {
                channels[index].members.values[member].read.readPasses = []
                channels[index].members.values[member].read.deliveredPasses = []
            }
        }
        guard !passes.isEmpty else { return }
        let index = Dictionary(uniqueKeysWithValues: channels.enumerated().map { ($0.element.cid, $0.offset) })
        for row in passes {
            guard let at = index[row.cid] else { throw .corrupt(path: "", reason: "pointer pass of \(row.userID) in unknown channel \(row.cid)") }
            let read = channels[at].members[row.userID]?.read
            let held = row.kind == .read ? read?.readPasses.count : read?.deliveredPasses.count
            guard held == nil || held == row.ordinal else {
                throw .corrupt(path: "", reason: "pointer pass \(row.ordinal) of \(row.userID) in \(row.cid) follows \(held ?? 0) passes")
            }
            try channels[at].appendStored(row.pass, kind: row.kind, of: row.userID)
        }
    }

    package func loadChannel(_ cid: ChannelCID, messageWindow: Int) throws(StorageError) -> CheckmarkCore.Channel? {
        try checkOpen()
        do {
            let connection = try journalReader()
            let logger = self.logger
            func run(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> [PostgresRow] {
                try Self.wait(connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger), closingOnTimeout: connection).rows
            }
            // One snapshot of the channel's rows.
            _ = try run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            defer { _ = try? run("COMMIT") }
            var key = PostgresBindings()
            key.append(cid.description)
            func load<Row>(_ table: TableDescription<Row>, _ clauses: String) throws -> [Row] {
                try PostgresTableBinder(table).decode(run(table.select(clauses), key))
            }
            guard let channel = try load(StateTables.channels, "WHERE cid = $1").first else { return nil }
            var rows = StoredStateAssembly(path: location.description, messageWindow: messageWindow)
            let messages = try PostgresTableBinder(StateTables.messages).decode(run(Self.messagesQuery(window: messageWindow, "WHERE cid = $1"), key))
            try Self.add(messages, of: [channel], to: &rows)
            rows.members = try load(StateTables.members, "WHERE cid = $1 ORDER BY position")
            rows.threadReads = try load(StateTables.threadReads, "WHERE cid = $1")
            rows.threads = try load(StateTables.threads, "WHERE cid = $1")
            rows.messageEdits = try load(StateTables.messageEdits, "WHERE cid = $1")
            rows.reactions = try load(StateTables.reactions, "WHERE cid = $1 ORDER BY position, created_at, user_id, type")
            var channels = try rows.assemble().snapshot.channels
            try Self.addPasses(load(StateTables.postgresPointerPasses, "WHERE cid = $1 ORDER BY user_id, kind, ordinal"), to: &channels)
            guard let channel = channels.first else { return nil }
            passLedger.withLock { $0.learn(channel) }
            return channel
        } catch let error as StorageError {
            throw error
        } catch {
            throw .unavailable(reason: "loading channel \(cid) from \(location): \(Self.describe(error))")
        }
    }

    // MARK: Writing

    package func commit(_ batch: CommitBatch) throws(StorageError) {
        try append(lock: nil, after: nil, notifying: true) { _ in batch }
    }

    package func append(after applied: [Int64], exclusively: Bool, notifying: Bool, _ build: ([JournalEntry]) throws -> CommitBatch) throws {
        try append(lock: exclusively ? .exclusive : .shared, after: applied, notifying: notifying, build)
    }

    package func committedElsewhere(_ entries: [JournalEntry]) {
        _ = othersCommitted(entries)
    }

    /// `entries`, which other nodes committed and this node is about to apply: the channels whose
    /// members they rewrote had their pass rows deleted and written again by those nodes, so what
    /// the ledger knows of them is forgotten (their members' next writes start from their first pass).
    private func othersCommitted(_ entries: [JournalEntry]) -> [JournalEntry] {
        var rewritten: [ChannelCID] = []
        for entry in entries {
            switch entry.command {
            case .createChannel(let cid, _, _), .addMembers(let cid, _), .removeMembers(let cid, _):
                rewritten.append(cid)
            case .upsertUser, .updateUser, .createChannelType, .updateChannelType, .connect, .disconnect, .watch, .stopWatching,
                 .sendMessage, .updateMessage, .deleteMessage, .sendReaction, .deleteReaction, .markRead, .markReadMany, .markThreadRead,
                 .markUnread, .markDelivered:
                break
            }
        }
        if !rewritten.isEmpty { passLedger.withLock { $0.forget(rewritten) } }
        return entries
    }

    /// How a commit holds the journal's append lock.
    private enum AppendLock {
        case shared, exclusive
    }

    /// One transaction: the append lock (as `lock` says; none for one node alone) and what other
    /// nodes committed past `applied` (one statement: ``follow(after:taking:limit:)``), then the
    /// batch `build` makes of those, commit; then, when `notifying`, the notification, sent without waiting for it. Four
    /// round trips to the database for a commit of one statement. A failure of the database fails
    /// the store: memory and database may disagree, and only reloading brings them together again.
    private func append(lock: AppendLock?, after applied: [Int64]?, notifying: Bool,
                        _ build: ([JournalEntry]) throws -> CommitBatch) throws(StorageError) {
        try checkOpen()
        var built = false
        do {
            try run("BEGIN")
            let others = try applied.map { try othersCommitted(follow(after: $0, taking: lock, limit: nil)) } ?? []
            let batch: CommitBatch
            do {
                batch = try build(others)
                built = true
            }
            try write(batch)
            try run("COMMIT")
            if notifying, let last = batch.entries.last?.seq { notifyCommitted(through: last) }
        } catch {
            if !connectionLost.withLockedValue({ $0 }) { _ = try? run("ROLLBACK") }
            if !built, let error = error as? StorageError { throw error }
            if !built { throw .unavailable(reason: "\(error)") }
            state.withLock { $0 = .failed }
            if let error = error as? StorageError, case .fenced = error { throw error }
            throw .commitFailed(reason: Self.describe(error))
        }
    }

    /// Runs what `combined` gathered (ending with `final`) and starts it afresh.
    private func flush(_ combined: inout PostgresCombinedWrite, final: String = "SELECT 1") throws {
        defer { combined = PostgresCombinedWrite() }
        guard !combined.isEmpty || final != "SELECT 1" else { return }
        let connection = self.connection
        guard !connection.isClosed else { throw StorageError.unavailable(reason: "the connection to \(location) is closed") }
        _ = try wait(connection.query(combined.query(final: final), logger: logger))
    }

    /// As ``flush(_:final:)``, and checks the batch's fence, the first part of `combined` when
    /// `fence` names its shards (then cleared: the rows stay locked until the commit ends).
    /// - Throws: ``StorageError/fenced(shards:)`` for the shards no longer held at their epochs: the
    ///   caller rolls back what the statement wrote.
    private func flush(_ combined: inout PostgresCombinedWrite, fence: inout [ShardID]?) throws {
        guard let shards = fence else { return try flush(&combined) }
        defer { combined = PostgresCombinedWrite() }
        fence = nil
        let connection = self.connection
        guard !connection.isClosed else { throw StorageError.unavailable(reason: "the connection to \(location) is closed") }
        let rows = try wait(connection.query(combined.query(final: "SELECT shard FROM w0"), logger: logger)).rows
        let held = Set(try rows.map { ShardID(Int(try $0.decode(Int32.self))) })
        let lost = shards.filter { !held.contains($0) }
        if !lost.isEmpty { throw StorageError.fenced(shards: lost) }
    }

    /// Adds the batch's fence as the first part of `combined`: the shards its owner still holds at
    /// the epochs it applied their commands at, locked (`FOR SHARE`) until the commit ends, so that
    /// no node takes one of them between the check and the commit. Returns the shards to check (nil
    /// for a batch without a fence).
    private func addFence(of batch: CommitBatch, to combined: inout PostgresCombinedWrite) -> [ShardID]? {
        guard !batch.fence.isEmpty else { return nil }
        precondition(combined.isEmpty, "the fence is the statement's first part")
        let fence = batch.fence.sorted { $0.key < $1.key }
        let owner = combined.placeholder(binding: batch.fenceOwner)
        combined.add(columns: 2, { rows in """
            SELECT shards.shard FROM shards JOIN \(rows) AS f(shard, epoch) ON shards.shard = f.shard AND shards.epoch = f.epoch
            WHERE shards.owner = \(owner) ORDER BY shards.shard FOR SHARE OF shards
            """ }, bind: { binds in
            binds.append(fence.map { Int32($0.key.rawValue) })
            binds.append(fence.map(\.value))
        })
        return fence.map(\.key)
    }

    /// Writes the batch in as few statements as it can (one for a commit without channel rewrites or
    /// members whose passes are rewritten). Every table's rows go in as array parameters. The pass
    /// ledger moves on as the batch is written: a commit that fails fails the store, and the node
    /// reloads (``load(messageWindow:)`` makes the ledger again).
    private func write(_ batch: CommitBatch) throws {
        let passes = try passLedger.withLock { ledger in try writePasses(of: batch, ledger: &ledger) }
        var combined = PostgresCombinedWrite()
        var fence = addFence(of: batch, to: &combined)
        let entries = batch.entries
        PostgresTableBinder(StateTables.journal).insert(entries, upsert: false, into: &combined)
        let events = JournalEventRow.writing(entries)
        PostgresTableBinder(StateTables.journalEvents).insert(events, upsert: false, into: &combined)
        PostgresTableBinder(StateTables.journalChannels).insertMissing(JournalEventRow.channelObjects(of: events), into: &combined)
        PostgresTableBinder(StateTables.users).insert(batch.users, upsert: true, into: &combined)
        PostgresTableBinder(StateTables.channelTypes).insert(batch.channelTypes, upsert: true, into: &combined)
        let channels = batch.channels
        if !channels.isEmpty {
            PostgresTableBinder(StateTables.channels).insert(channels, upsert: true, into: &combined)
            // On its own: the rows it deletes are inserted again below.
            try flush(&combined, fence: &fence)
            var cids = PostgresBindings()
            cids.append(channels.map(\.cid.description))
            try run("DELETE FROM members WHERE cid = ANY($1)", cids)
            try run("DELETE FROM thread_reads WHERE cid = ANY($1)", cids)
            let rows = channels.flatMap { channel in
                let countable = channel.messages.countableCount
                return channel.memberOrder.enumerated().map {
                    (cid: channel.cid, position: $0.offset, member: channel.members[$0.element]!, countableSeen: countable)
                }
            }
            PostgresTableBinder(StateTables.membersWithoutPasses).insert(rows, upsert: false, into: &combined)
        }
        // Upserted: rows another node wrote already stay as they are (the same pass at the same place).
        PostgresTableBinder(StateTables.postgresPointerPasses).insert(passes, upsert: true, into: &combined)
        let threadReads = batch.threadReads + batch.channels.flatMap(ThreadReadRow.all(of:))
        PostgresTableBinder(StateTables.threadReads).insert(threadReads, upsert: true, into: &combined)
        PostgresTableBinder(StateTables.threads).insert(batch.threads, upsert: true, into: &combined)
        PostgresTableBinder(StateTables.members).update(
            batch.members.map { (cid: $0.cid, position: 0, member: $0.member, countableSeen: $0.countableSeen) },
            columns: StateTables.memberReadStateUpdateWithoutPasses, into: &combined)
        PostgresTableBinder(StateTables.messages).insert(batch.messages, upsert: false, into: &combined)
        PostgresTableBinder(StateTables.messageEdits).insert(batch.messageEdits, upsert: true, into: &combined)
        if !batch.messageReactions.isEmpty {
            // On its own: the rows it deletes are inserted again below.
            try flush(&combined, fence: &fence)
            var keys = PostgresBindings()
            keys.append(batch.messageReactions.map(\.cid.description))
            keys.append(batch.messageReactions.map { Int64($0.position) })
            try run("DELETE FROM reactions WHERE (cid, position) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))", keys)
            PostgresTableBinder(StateTables.reactions).insert(batch.reactionRows, upsert: false, into: &combined)
        }
        PostgresTableBinder(StateTables.channelSequences).insert(batch.channelSequenceRows, upsert: true, into: &combined)
        try flush(&combined, fence: &fence)
    }

    /// The pass rows `batch` adds: every pass of a rewritten channel's members (the channel's rows
    /// deleted first), and each changed member's passes from what the ledger knows to be stored on
    /// (all of them, its rows deleted first, when the stored ones are not the start of its passes).
    private func writePasses(of batch: CommitBatch, ledger: inout PassLedger) throws -> [StateTables.OrdinalPassRow] {
        var rows: [StateTables.OrdinalPassRow] = []
        func add(_ userID: String, in cid: ChannelCID, read: Slice<PointerPasses>, delivered: Slice<PointerPasses>) {
            for (ordinal, pass) in zip(read.indices, read) { rows.append((cid, userID, .read, ordinal, pass)) }
            for (ordinal, pass) in zip(delivered.indices, delivered) { rows.append((cid, userID, .delivered, ordinal, pass)) }
        }
        var rewritten: (cids: [String], userIDs: [String]) = ([], [])
        let channels = batch.channels
        let rewrittenChannels = Set(channels.map(\.cid))
        // A rewritten channel's members are written whole below: once each, as one statement must.
        for (cid, member, _) in batch.members where !rewrittenChannels.contains(cid) {
            switch ledger.write(of: member, in: cid) {
            case .append(let read, let delivered):
                add(member.userID, in: cid, read: read, delivered: delivered)
            case .rewrite:
                rewritten.cids.append(cid.description)
                rewritten.userIDs.append(member.userID)
                add(member.userID, in: cid, read: member.read.readPasses[...], delivered: member.read.deliveredPasses[...])
            }
        }
        if !channels.isEmpty {
            var cids = PostgresBindings()
            cids.append(channels.map(\.cid.description))
            try run("DELETE FROM pointer_passes WHERE cid = ANY($1)", cids)
            for channel in channels {
                ledger.learn(channel)
                for (userID, member) in channel.members {
                    add(userID, in: channel.cid, read: member.read.readPasses[...], delivered: member.read.deliveredPasses[...])
                }
            }
        }
        if !rewritten.cids.isEmpty {
            var binds = PostgresBindings()
            binds.append(rewritten.cids)
            binds.append(rewritten.userIDs)
            try run("DELETE FROM pointer_passes WHERE (cid, user_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))", binds)
        }
        return rows
    }

    /// Tells the other nodes that the journal reaches `seq`, after the commit and outside its
    /// transaction: a `NOTIFY` inside one holds PostgreSQL's cluster-wide notify lock until the
    /// commit is flushed, which orders every notifying commit of the database behind one another. A
    /// notification that is lost costs the others at most their poll interval (a second), so a
    /// failure here fails nothing.
    /// Sent on the notification connection without waiting (the next commit does not wait behind
    /// it); from the writer's session, waited for, while that connection is down.
    private func notifyCommitted(through seq: Int64) {
        var binds = PostgresBindings()
        binds.append(notifyChannel)
        binds.append(String(seq))
        if let listening = listener.withLock({ $0 }), !listening.isClosed {
            let logger = self.logger
            listening.query(PostgresQuery(unsafeSQL: "SELECT pg_notify($1, $2)", binds: binds), logger: logger).whenFailure { error in
                logger.debug("could not notify other nodes of a commit; they poll", metadata: ["error": "\(Self.describe(error))"])
            }
            return
        }
        do {
            try run("SELECT pg_notify($1, $2)", binds)
        } catch {
            logger.debug("could not notify other nodes of a commit; they poll", metadata: ["error": "\(Self.describe(error))"])
        }
    }

    // MARK: Journal

    package func commands(after applied: [Int64], limit: Int) throws(StorageError) -> [JournalEntry] {
        try checkOpen()
        do {
            return othersCommitted(try follow(after: applied, taking: nil, limit: limit))
        } catch let error as StorageError {
            throw error
        } catch {
            throw .unavailable(reason: "reading the journal: \(Self.describe(error))")
        }
    }

    /// The entries past `applied` in every stream (one look-up in the stream index per stream),
    /// oldest first, at most `limit`, with the texts of their sends' messages; read after taking the
    /// append lock for the transaction when `lock` says so. One statement (`checkmark_follow`).
    /// - Throws: ``StorageError/corrupt(path:reason:)`` for a send whose message is not stored.
    private func follow(after applied: [Int64], taking lock: AppendLock?, limit: Int?) throws -> [JournalEntry] {
        precondition(applied.count == JournalStream.count, "one position per stream")
        var binds = PostgresBindings()
        binds.append(Int32(lock.map { $0 == .shared ? 1 : 2 } ?? 0))
        binds.append(applied)
        if let limit { binds.append(Int64(limit)) } else { binds.appendNull() }
        return try run("SELECT seq, at, command, message_position, stream, stream_seq, message_text FROM checkmark_follow($1, $2, $3)", binds).map { row in
            let (entrySeq, at, command, messagePosition, stream, streamSeq, text) = try row.decode((Int64, Int64, String, Int64?, Int32, Int64, String?).self)
            var entry = JournalEntry(seq: entrySeq, stream: try StateTables.stream(Int64(stream)), streamSeq: streamSeq, at: Timestamp(rawValue: at),
                                     command: try CommandCodec.decode(Array(command.utf8)), events: [], messagePosition: messagePosition.map { Int($0) })
            try entry.restoreText(text)
            return entry
        }
    }

    /// The entries after `seq`, in journal order.
    private func fetchCommands(after seq: Int64, limit: Int) throws -> [JournalEntry] {
        var binds = PostgresBindings()
        binds.append(seq)
        return try fetchCommands("SELECT seq, at, command, message_position, stream, stream_seq FROM journal WHERE seq > $1 ORDER BY seq LIMIT \(limit)", binds)
    }

    /// The entries `sql` selects (`seq, at, command, message_position, stream, stream_seq`), texts restored.
    private func fetchCommands(_ sql: String, _ binds: PostgresBindings) throws -> [JournalEntry] {
        var entries = try run(sql, binds).map { row in
            let (entrySeq, at, command, messagePosition, stream, streamSeq) = try row.decode((Int64, Int64, String, Int64?, Int32, Int64).self)
            return JournalEntry(seq: entrySeq, stream: try StateTables.stream(Int64(stream)), streamSeq: streamSeq, at: Timestamp(rawValue: at),
                                command: try CommandCodec.decode(Array(command.utf8)), events: [], messagePosition: messagePosition.map { Int($0) })
        }
        // A `send_message` is kept without the text its message's row holds (committed with it).
        let wanted = JournalEntry.textPositions(in: entries)
        if !wanted.isEmpty { try JournalEntry.restoreTexts(storedMessages(wanted) { sql, binds in try run(sql, binds) }, in: &entries) }
        return entries
    }

    package func journal(after seq: Int64, limit: Int) throws(StorageError) -> [JournalEntry] {
        try checkOpen()
        do {
            // One snapshot: a prune on any node between the reads would take objects its events need.
            try run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            defer { _ = try? run("COMMIT") }
            var entries = try fetchCommands(after: seq, limit: limit)
            guard let first = entries.first?.seq, let last = entries.last?.seq else { return entries }
            var binds = PostgresBindings()
            binds.append(first)
            binds.append(last)
            let events = StateTables.journalEvents
            // Retention leaves gaps in the sequence: entries are found by their seq.
            let index = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($0.element.seq, $0.offset) })
            for row in try PostgresTableBinder(events).decode(run(events.select("WHERE command_seq BETWEEN $1 AND $2 ORDER BY seq"), binds)) {
                guard let position = index[row.commandSeq] else { continue }
                entries[position].append(row.event)
            }
            let messages = try storedMessages(JournaledMessage.positions(in: entries.flatMap(\.events))) { sql, binds in try run(sql, binds) }
            let objects = try channelObjects(JournaledChannel.keys(in: entries.flatMap(\.events))) { sql, binds in try run(sql, binds) }
            for position in entries.indices {
                try JournaledMessage.attach(messages, to: &entries[position].events)
                try JournaledChannel.attach(objects, to: &entries[position].events)
            }
            return entries
        } catch let error as StorageError {
            throw error
        } catch {
            throw .unavailable(reason: "reading the journal: \(Self.describe(error))")
        }
    }

    package func channelEvents(_ cid: ChannelCID, after: Int64, through: Int64, limit: Int, maxBytes: Int) throws(StorageError) -> [JournalEvent] {
        try checkOpen()
        do {
            var binds = PostgresBindings()
            binds.append(cid.description)
            binds.append(after)
            binds.append(through)
            binds.append(Int64(clamping: limit))
            binds.append(Int64(clamping: maxBytes))
            let events = StateTables.journalEvents
            // The byte budget is applied by the server, so that a page of large events is not sent
            // whole only to be cut here: the first row, then every row while the running total of
            // payload bytes stays within it (the window is computed row by row, up to the limit).
            // Each with where its entry is in its stream (after the event's columns).
            let query = PostgresQuery(unsafeSQL: """
                SELECT \(events.columns.map { "page." + $0.name }.joined(separator: ", ")), j.stream, j.stream_seq
                FROM (SELECT \(events.columnList),
                    sum(octet_length(payload) + coalesce(message_bytes, 0) + coalesce(channel_bytes, 0)) OVER (ORDER BY channel_seq) AS running,
                    row_number() OVER (ORDER BY channel_seq) AS position
                    FROM \(events.name) WHERE cid = $1 AND channel_seq > $2 AND channel_seq <= $3 ORDER BY channel_seq LIMIT $4) page
                LEFT JOIN journal j ON j.seq = page.command_seq
                WHERE position = 1 OR running <= $5 ORDER BY page.channel_seq
                """, binds: binds)
            let connection = try journalReader()
            func run(_ query: PostgresQuery) throws -> [PostgresRow] {
                try Self.wait(connection.query(query, logger: logger), closingOnTimeout: connection).rows
            }
            // Not one transaction: other threads read on this connection too (a snapshot would hold
            // theirs). A prune on any node between the page's read and its objects' removes objects
            // only with the events that refer to them: the page is read once more, without those.
            var attempt = 1
            while true {
                let rows = try run(query)
                var page = try PostgresTableBinder(events).decode(rows).map(\.event)
                for (index, row) in rows.enumerated() {
                    let cells = row.makeRandomAccess()
                    guard let stream = try cells[events.columns.count].decode(Int32?.self),
                          let number = try cells[events.columns.count + 1].decode(Int64?.self) else { continue }
                    page[index].entry = StreamPosition(stream: try StateTables.stream(Int64(stream)), number: number)
                }
                let messages = try storedMessages(JournaledMessage.positions(in: page)) { sql, binds in try run(PostgresQuery(unsafeSQL: sql, binds: binds)) }
                try JournaledMessage.attach(messages, to: &page)
                let objects = try channelObjects(JournaledChannel.keys(in: page)) { sql, binds in try run(PostgresQuery(unsafeSQL: sql, binds: binds)) }
                do {
                    try JournaledChannel.attach(objects, to: &page)
                    return page
                } catch {
                    guard attempt == 1 else { throw error }
                    attempt += 1
                }
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw .unavailable(reason: "reading the journal: \(Self.describe(error))")
        }
    }

    /// The messages at `wanted` (per channel, by position), read by `run`: archived texts, and what journaled
    /// events and commands keep once (``JournaledMessage``, ``JournalEntry/messagePosition``).
    private func storedMessages(_ wanted: [ChannelCID: [Int]], _ run: (String, PostgresBindings) throws -> [PostgresRow]) throws
        -> [ChannelCID: [Int: Message]] {
        let table = StateTables.messages
        var messages: [ChannelCID: [Int: Message]] = [:]
        guard !wanted.isEmpty else { return messages }
        // One statement for every channel: on a commit's path each is a round trip.
        let pairs = wanted.flatMap { cid, positions in positions.map { (cid.description, Int64($0)) } }
        var binds = PostgresBindings()
        binds.append(pairs.map(\.0))
        binds.append(pairs.map(\.1))
        let clause = "WHERE (cid, position) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))"
        for row in try PostgresTableBinder(table).decode(run(table.select(clause), binds)) {
            messages[row.message.cid, default: [:]][row.position] = row.message
        }
        return messages
    }

    /// The channel objects at `wanted` (per channel, by the `since` that keys them), read by `run`.
    private func channelObjects(_ wanted: [ChannelCID: Set<Int64>], _ run: (String, PostgresBindings) throws -> [PostgresRow]) throws
        -> [ChannelCID: [Int64: [UInt8]]] {
        let table = StateTables.journalChannels
        var objects: [ChannelCID: [Int64: [UInt8]]] = [:]
        guard !wanted.isEmpty else { return objects }
        let pairs = wanted.flatMap { cid, keys in keys.sorted().map { (cid.description, $0) } }
        var binds = PostgresBindings()
        binds.append(pairs.map(\.0))
        binds.append(pairs.map(\.1))
        let clause = "WHERE (cid, since) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))"
        for row in try PostgresTableBinder(table).decode(run(table.select(clause), binds)) {
            objects[row.cid, default: [:]][row.since] = row.object
        }
        return objects
    }

    package func archivedTexts(_ cid: ChannelCID, positions: [Int]) throws(StorageError) -> [Int: String] {
        try checkOpen()
        guard !positions.isEmpty else { return [:] }
        do {
            let connection = try journalReader()
            // The current texts: an edit's where there is one, else the text sent.
            var binds = PostgresBindings()
            binds.append(cid.description)
            binds.append(positions.map { Int64($0) })
            let rows = try Self.wait(connection.query(PostgresQuery(unsafeSQL: """
                SELECT m.position, coalesce(e.text, m.text) FROM messages m
                LEFT JOIN message_edits e ON e.cid = m.cid AND e.position = m.position
                WHERE m.cid = $1 AND m.position = ANY($2::bigint[])
                """, binds: binds), logger: logger), closingOnTimeout: connection).rows
            var texts: [Int: String] = [:]
            for row in rows {
                let (position, text) = try row.decode((Int64, String).self)
                texts[Int(position)] = text
            }
            return texts
        } catch {
            throw .unavailable(reason: "reading archived messages: \(Self.describe(error))")
        }
    }

    package func channels(holdingMessage id: String) throws(StorageError) -> [ChannelCID] {
        try checkOpen()
        let cids: [String]
        do {
            let connection = try journalReader()
            var binds = PostgresBindings()
            binds.append(id)
            let rows = try Self.wait(connection.query(PostgresQuery(
                unsafeSQL: "SELECT cid FROM messages WHERE id = $1", binds: binds), logger: logger), closingOnTimeout: connection).rows
            cids = try rows.map { try $0.decode(String.self) }
        } catch {
            throw .unavailable(reason: "looking for message \(id): \(Self.describe(error))")
        }
        return try cids.map { text throws(StorageError) in try StateTables.cid(text) }.sorted()
    }

    /// The journal reader's connection, opened (in the location's schema) when there is none or it was
    /// lost. Connecting waits at most ``statementTimeout``, and not under the lock that ``close()`` takes.
    private func journalReader() throws -> PostgresConnection {
        if let current = reader.withLock({ $0 }), !current.isClosed { return current }
        let connection = try Self.connect(location, on: group.next(), id: 3, logger: logger)
        do {
            if let schema = location.schema {
                _ = try Self.wait(connection.query(PostgresQuery(unsafeSQL: "SET search_path TO \"\(schema)\""), logger: logger),
                                  closingOnTimeout: connection)
            }
        } catch {
            try? connection.close().wait()
            throw error
        }
        let kept = reader.withLock { current -> Bool in
            guard state.withLock({ $0 != .closed }) else { return false }
            current = connection
            return true
        }
        guard kept else {
            try? connection.close().wait()
            throw StorageError.closed
        }
        return connection
    }

    /// Removes the channel objects of `cids` that no event left refers to: those older than the
    /// newest one at or before the channel's oldest event (all but the newest when none is left).
    /// References are monotonic in a channel (``JournaledChannel``), so no event left needs them.
    private func pruneChannelObjects(of cids: some Collection<String>) throws {
        guard !cids.isEmpty else { return }
        var binds = PostgresBindings()
        binds.append(Array(cids))
        try run("""
            DELETE FROM journal_channels o USING unnest($1::text[]) AS c(cid) WHERE o.cid = c.cid AND o.since < (
                SELECT max(since) FROM journal_channels WHERE cid = c.cid
                AND since <= coalesce((SELECT min(channel_seq) FROM journal_events WHERE cid = c.cid), \(Int64.max)))
            """, binds)
    }

    package func prune(_ policy: RetentionPolicy, now: Timestamp, limit: Int) throws(StorageError) -> (entries: Int, events: Int) {
        try checkOpen()
        do {
            var entries = 0
            var events = 0
            try run("BEGIN")
            do {
                try run(JournalPositions.keep)
                if let age = policy.maxAgeSeconds {
                    // The oldest entries first, with their events.
                    var binds = PostgresBindings()
                    binds.append(now.rawValue - age * 1_000_000)
                    binds.append(Int64(limit))
                    let oldest = "SELECT seq FROM journal WHERE at < $1 ORDER BY seq LIMIT $2"
                    let removed = try run("""
                        DELETE FROM journal_events WHERE command_seq IN (\(oldest)) RETURNING cid, channel_since IS NOT NULL
                        """, binds).map { try $0.decode((String?, Bool).self) }
                    events += removed.count
                    try pruneChannelObjects(of: Set(removed.compactMap { $0.1 ? $0.0 : nil }))
                    entries += try count(run("WITH d AS (DELETE FROM journal WHERE seq IN (\(oldest)) RETURNING 1) SELECT count(*) FROM d", binds))
                }
                if let keep = policy.maxEventsPerChannel {
                    let swept = try counter(JournalPruning.sweptThrough)
                    var target = try counter(JournalPruning.sweepTarget)
                    // Channel by channel, each a range of its `journal_events_channel` index.
                    var binds = PostgresBindings()
                    binds.append(Int64(keep))
                    for row in try run("SELECT cid, last_seq FROM channel_sequences WHERE last_seq > $1", binds) where entries + events < limit {
                        let (cid, lastSeq) = try row.decode((String, Int64).self)
                        var first = PostgresBindings()
                        first.append(cid)
                        guard let lowest = try run("SELECT min(channel_seq) FROM journal_events WHERE cid = $1", first).first?.decode(Int64?.self),
                              lowest <= lastSeq - Int64(keep) else { continue }
                        var range = PostgresBindings()
                        range.append(cid)
                        range.append(lowest)
                        range.append(min(lastSeq - Int64(keep), lowest + Int64(limit - entries - events) - 1))
                        let commands = try run("""
                            DELETE FROM journal_events WHERE cid = $1 AND channel_seq BETWEEN $2 AND $3 RETURNING command_seq
                            """, range).map { try $0.decode(Int64.self) }
                        events += commands.count
                        try pruneChannelObjects(of: [cid])
                        // Commands the sweep has passed already go now if none of their events is left.
                        for command in Set(commands) where command <= swept {
                            var seq = PostgresBindings()
                            seq.append(command)
                            entries += try count(run("WITH d AS (DELETE FROM journal WHERE seq = $1 AND \(JournalPruning.noEventLeft) RETURNING 1) SELECT count(*) FROM d", seq))
                        }
                        target = max(target, commands.max() ?? 0)
                    }
                    // The commands up to the newest one whose events were removed, that have no event
                    // left: at most `limit` of them examined per call.
                    if target > swept {
                        var window = PostgresBindings()
                        window.append(swept)
                        window.append(target)
                        window.append(Int64(limit - 1))
                        let through = try run("SELECT seq FROM journal WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT 1 OFFSET $3", window)
                            .first?.decode(Int64.self) ?? target
                        var sweep = PostgresBindings()
                        sweep.append(swept)
                        sweep.append(through)
                        entries += try count(run("""
                            WITH d AS (DELETE FROM journal WHERE seq > $1 AND seq <= $2 AND \(JournalPruning.noEventLeft) RETURNING 1)
                            SELECT count(*) FROM d
                            """, sweep))
                        var place = PostgresBindings()
                        place.append(JournalPruning.sweptThrough)
                        place.append(through)
                        place.append(JournalPruning.sweepTarget)
                        place.append(target)
                        try run("INSERT INTO counters (name, value) VALUES ($1, $2), ($3, $4) ON CONFLICT (name) DO UPDATE SET value = excluded.value", place)
                    }
                }
                try run("COMMIT")
            } catch {
                _ = try? run("ROLLBACK")
                throw error
            }
            return (entries, events)
        } catch {
            throw .unavailable(reason: "pruning the journal: \(Self.describe(error))")
        }
    }

    private func count(_ rows: [PostgresRow]) throws -> Int {
        Int(try rows.first?.decode(Int64.self) ?? 0)
    }

    /// A named counter's value, 0 when it was never set.
    private func counter(_ name: String) throws -> Int64 {
        var binds = PostgresBindings()
        binds.append(name)
        return try run("SELECT value FROM counters WHERE name = $1", binds).first?.decode(Int64.self) ?? 0
    }

    // MARK: Notifications

    package func startListening(onAppend: @escaping @Sendable (Int64) -> Void, onPeerMessage: @escaping @Sendable (String) -> Void) {
        openListener(onAppend, onPeerMessage)
    }

    package func sendToPeers(_ messages: [String]) -> EventLoopFuture<Void>? {
        guard let connection = listener.withLock({ $0 }), !connection.isClosed, !messages.isEmpty else { return nil }
        guard let large = messages.first(where: { $0.utf8.count > Self.maxPeerMessageBytes }) else {
            var binds = PostgresBindings()
            binds.append(peerChannel)
            binds.append(messages)
            // One statement for them all, in order.
            return connection.query(PostgresQuery(unsafeSQL: "SELECT pg_notify($1, m) FROM (SELECT m FROM unnest($2::text[]) WITH ORDINALITY AS u(m, i) ORDER BY i) AS s",
                                                  binds: binds), logger: logger).map { _ in }
        }
        return connection.eventLoop.makeFailedFuture(
            StorageError.unavailable(reason: "peer message of \(large.utf8.count) bytes is over \(Self.maxPeerMessageBytes)"))
    }

    package var isListening: Bool {
        listener.withLock { $0.map { !$0.isClosed } ?? false }
    }

    package func notifyPeers(_ message: String) throws(StorageError) {
        try checkOpen()
        guard message.utf8.count <= Self.maxPeerMessageBytes else {
            throw .unavailable(reason: "peer message of \(message.utf8.count) bytes is over \(Self.maxPeerMessageBytes)")
        }
        do {
            var binds = PostgresBindings()
            binds.append(peerChannel)
            binds.append(message)
            try run("SELECT pg_notify($1, $2)", binds)
        } catch {
            throw .unavailable(reason: "notifying other nodes: \(Self.describe(error))")
        }
    }

    /// Opens the notification connection; when it is lost (database restart, network), tries again
    /// every ``listenRetrySeconds`` until the store closes (also while the store is failed: a node
    /// that reopens it hears other nodes again). `failures` is how many attempts failed in a row: the
    /// first is logged as a warning, the rest at debug level.
    private func openListener(_ onAppend: @escaping @Sendable (Int64) -> Void, _ onPeerMessage: @escaping @Sendable (String) -> Void,
                              failures: Int = 0) {
        guard state.withLock({ $0 != .closed }) else { return }
        let loop = group.next()
        let logger = self.logger
        let channel = notifyChannel
        let peers = peerChannel
        PostgresConnection.connect(on: loop, configuration: Self.configuration(location), id: 2, logger: logger)
            .flatMap { connection -> EventLoopFuture<PostgresConnection> in
                connection.addListener(channel: channel) { _, notification in
                    if let seq = Int64(notification.payload) { onAppend(seq) }
                }
                connection.addListener(channel: peers) { _, notification in onPeerMessage(notification.payload) }
                return connection.query("LISTEN \(unescaped: channel)", logger: logger)
                    .flatMap { _ in connection.query("LISTEN \(unescaped: peers)", logger: logger) }
                    .map { _ in connection }
                    .flatMapErrorThrowing { error in
                        // Connected but not listening (the database went away, or the store's threads
                        // are stopping): closed, not dropped (the client library asserts that a
                        // connection is closed before it is released).
                        connection.closeInBackground()
                        throw error
                    }
            }
            .whenComplete { result in
                switch result {
                case .success(let connection):
                    let keep = self.listener.withLock { current -> Bool in
                        guard self.state.withLock({ $0 != .closed }) else { return false }
                        current = connection
                        return true
                    }
                    guard keep else {
                        connection.closeInBackground()
                        return
                    }
                    if failures > 0 {
                        logger.info("listening for other nodes' commits again", metadata: ["failed_attempts": "\(failures)"])
                    }
                    onAppend(0)
                    connection.closeFuture.whenComplete { _ in
                        guard self.state.withLock({ $0 != .closed }) else { return }
                        logger.warning("lost the notification connection; reconnecting", metadata: ["database": "\(self.location)"])
                        loop.scheduleTask(in: .seconds(Self.listenRetrySeconds)) { self.openListener(onAppend, onPeerMessage) }
                    }
                case .failure(let error):
                    guard self.state.withLock({ $0 != .closed }) else { return }
                    logger.log(level: failures == 0 ? .warning : .debug, "cannot listen for other nodes' commits; retrying",
                               metadata: ["error": "\(Self.describe(error))", "every_seconds": "\(Self.listenRetrySeconds)"])
                    loop.scheduleTask(in: .seconds(Self.listenRetrySeconds)) { self.openListener(onAppend, onPeerMessage, failures: failures + 1) }
                }
            }
    }
}
