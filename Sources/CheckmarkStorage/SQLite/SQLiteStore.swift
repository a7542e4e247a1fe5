import CSQLiteConfig
import CheckmarkCore
import Foundation
import GRDB
import GRDBSQLite
import Logging
import Synchronization

/// The embedded default store: one SQLite database in the data directory, in WAL mode with
/// `synchronous=FULL`, so that a commit that returned survives a killed process and a power cut (the
/// WAL is fsynced at every commit; group commit makes that one fsync per batch, not per confirmation).
/// The WAL is copied back into the database file in the background (``SQLiteCheckpointPolicy``).
package final class SQLiteStore: ReceiptsStore {
    package let directory: DataDirectory
    private let queue: DatabaseQueue
    /// A read-only connection of its own for ``channelEvents(_:after:through:limit:maxBytes:)``: in WAL
    /// mode it reads the last commit while the writer's connection writes the next one.
    private let reader: DatabaseQueue
    private let checkpointer: SQLiteCheckpointer
    private let state = Mutex(StoreState.open)
    /// Which pointer passes are stored already: made by the first load, or from the table by the
    /// first commit before any load or after a failed one. Loads and commits hold it while they run.
    private let passLedger = Mutex<PassLedger?>(nil)

    private enum StoreState { case open, failed, closed }

    /// The page cache of the store's connection, in bytes (setting `sqlite_cache`): a batch whose
    /// changed pages outgrow it writes some of them to the log before it commits. A batch of 5,000
    /// confirmations at 10,000 clients changes about 10 MB of pages (SQLite's own default is 2 MB).
    package static let defaultCacheBytes = 16 * 1024 * 1024
    /// The page cache the writer's connection loads the state with (in KiB).
    static let loadCacheKiB = 512
    /// The page cache of ``verify()``'s connection, in KiB.
    static let verifyCacheKiB = 128
    /// The page cache of the journal reader's connection (replays read pages of one channel's events).
    static let readerCacheBytes = 2 * 1024 * 1024
    /// The largest page cache, 1 TiB: SQLite takes the size as a 32-bit count of KiB.
    package static let maxCacheBytes = 1 << 40

    /// SQLite counts every allocation under one process-wide mutex unless told not to before it
    /// starts; nothing here reads those counts. Done once, before the first database is opened: a
    /// process that started SQLite already (another library) keeps its counts.
    private static let memoryStatisticsOff: Bool = checkmark_sqlite_disable_memory_statistics() == 0

    /// Opens (creating if needed) the database of `directory` and applies pending migrations, with a
    /// page cache of `cacheBytes` (rounded up to whole KiB; at most 1 TiB).
    /// - Throws: ``StorageError/schemaNewer(path:unknownMigrations:)`` when a newer binary wrote it,
    ///   ``StorageError/corrupt(path:reason:)`` for a damaged or foreign file,
    ///   ``StorageError/unavailable(reason:)`` otherwise.
    package init(directory: DataDirectory, checkpoints: SQLiteCheckpointPolicy = .init(), cacheBytes: Int = SQLiteStore.defaultCacheBytes,
                 logger: Logger? = nil) throws(StorageError) {
        if !Self.memoryStatisticsOff {
            logger?.debug("SQLite started before its memory statistics could be turned off: its allocations are counted under a mutex")
        }
        self.directory = directory
        let path = directory.databasePath
        // SQLite opens an empty file as a new, empty database: a truncated file would silently start
        // the server with no users, channels or receipts. Only a missing file means "start afresh".
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size == 0 {
            throw .corrupt(path: path, reason: "the database file is empty (0 bytes); restore it from a backup, or delete it to start with no data")
        }
        var configuration = Configuration()
        configuration.label = "checkmark"
        configuration.busyMode = .immediateError
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = FULL")
            // A negative cache size is in KiB.
            try db.execute(sql: "PRAGMA cache_size = -\(max(1, (min(cacheBytes, Self.maxCacheBytes) + 1023) / 1024))")
            // Checkpoints run in the background (SQLiteCheckpointer), not inside a commit.
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
            let migrator = SQLiteSchema.migrator
            let (superseded, applied) = try queue.read { db in
                (try migrator.hasBeenSuperseded(db), try migrator.appliedIdentifiers(db))
            }
            if superseded {
                let known = Set(migrator.migrations)
                throw StorageError.schemaNewer(path: path, unknownMigrations: applied.subtracting(known).sorted())
            }
            try migrator.migrate(queue)
            let checkpointer = SQLiteCheckpointer(path: path, policy: checkpoints, logger: logger)
            self.checkpointer = checkpointer
            queue.inDatabase { db in checkpointer.attach(to: db) }
            let readerCacheKiB = Self.readerCacheBytes / 1024
            var readerConfiguration = Configuration()
            readerConfiguration.label = "checkmark-journal-reader"
            readerConfiguration.readonly = true
            // A reader waits for a moment SQLite holds the log's index (its recovery), never for a commit.
            readerConfiguration.busyMode = .timeout(5)
            readerConfiguration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA cache_size = -\(readerCacheKiB)")
            }
            reader = try DatabaseQueue(path: path, configuration: readerConfiguration)
        } catch {
            throw Self.storageError(error, path: path)
        }
    }

    /// What opening, loading or checking the database at `path` failed with, as a storage error: its
    /// own, SQLite's mapped by ``openError(_:path:)``, or `unavailable`.
    private static func storageError(_ error: any Error, path: String) -> StorageError {
        switch error {
        // Rows that do not fit together are found where the file is not known: named here.
        case StorageError.corrupt(let at, let reason) where at.isEmpty: .corrupt(path: path, reason: reason)
        case let error as StorageError: error
        case let error as DatabaseError: openError(error, path: path)
        default: .unavailable(reason: "\(error)")
        }
    }

    private static func openError(_ error: DatabaseError, path: String) -> StorageError {
        switch error.resultCode {
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            .corrupt(path: path, reason: error.message ?? "\(error.resultCode)")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            .lockedByAnotherProcess(path: path)
        case .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM:
            .directoryUnwritable(path: path, reason: error.message ?? "\(error.resultCode)")
        default:
            .unavailable(reason: "\(error)")
        }
    }

    /// Checks the structure of every page of the database (SQLite's `quick_check`), on a read-only
    /// connection of its own: a damaged file that opens and loads (its damage elsewhere than the state
    /// tables) is found here. Its time grows with the file, so the server runs it after start, not
    /// before, and beside the journal reader (channels loaded on first use, archived texts and
    /// resumes do not wait for it).
    /// - Throws: ``StorageError/corrupt(path:reason:)`` with SQLite's first finding.
    package func verify() throws(StorageError) {
        try checkOpen()
        let path = directory.databasePath
        do {
            var configuration = Configuration()
            configuration.label = "checkmark-verify"
            configuration.readonly = true
            configuration.busyMode = .timeout(5)
            // It reads each page once: a cache would only hold memory for as long as the check runs.
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -\(Self.verifyCacheKiB)") }
            let checker = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? checker.close() }
            try checker.read { db in
                let check = try String.fetchOne(db, sql: "PRAGMA quick_check") ?? "no answer"
                guard check == "ok" else { throw StorageError.corrupt(path: path, reason: check) }
            }
        } catch {
            throw Self.storageError(error, path: path)
        }
    }

    /// Checkpoints of the write-ahead log so far: in the background, and by commits that found it at
    /// ``SQLiteCheckpointPolicy/limitPages``.
    package var checkpoints: (background: Int, atLimit: Int) { checkpointer.checkpoints }

    /// The page cache the store's connection runs with, in bytes (SQLite's `cache_size`).
    package var cacheBytes: Int {
        get throws {
            try queue.read { db in
                let size = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0
                // Negative: KiB; positive: pages.
                return size < 0 ? -size * 1024 : size * (try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0)
            }
        }
    }

    /// Bytes the writer's page cache holds now (SQLite's `SQLITE_DBSTATUS_CACHE_USED`).
    var cacheUsedBytes: Int {
        queue.inDatabase { db in
            var used: Int32 = 0
            var highest: Int32 = 0
            _ = sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_USED, &used, &highest, 0)
            return Int(used)
        }
    }

    package var isReady: Bool { state.withLock { $0 == .open } }

    package func close() {
        state.withLock { $0 = .closed }
        checkpointer.close()
        try? reader.close()
        try? queue.close()
        directory.release()
    }

    private func checkOpen() throws(StorageError) {
        let current = state.withLock { $0 }
        guard current == .open else { throw current == .closed ? .closed : .commitFailed(reason: "storage failed earlier") }
    }

    // MARK: Loading

    package func load(messageWindow: Int) throws(StorageError) -> StoredState {
        try checkOpen()
        do {
            return try passLedger.withLock { ledger in
                let state = try readWithLoadCache { db in try Self.load(db, messageWindow: messageWindow) }
                if ledger == nil { ledger = PassLedger(loaded: state.snapshot.channels) }
                return state
            }
        } catch {
            throw Self.storageError(error, path: directory.databasePath)
        }
    }

    /// Reads on the writer's connection with a small page cache (``loadCacheKiB``), the configured one
    /// restored after: a load reads each page once, and the cache is not left full of pages that
    /// commits will not touch.
    private func readWithLoadCache<T>(_ read: (Database) throws -> T) throws -> T {
        let configured = try queue.inDatabase { db in
            let size = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0
            try db.execute(sql: "PRAGMA cache_size = -\(Self.loadCacheKiB)")
            return size
        }
        defer {
            try? queue.inDatabase { db in
                // The pages a load read go with it: commits read other pages.
                db.releaseMemory()
                try db.execute(sql: "PRAGMA cache_size = \(configured)")
            }
        }
        return try queue.read(read)
    }

    package func loadDormant() throws(StorageError) -> StoredState {
        try checkOpen()
        do {
            return try passLedger.withLock { ledger in
                let state = try readWithLoadCache { db in try Self.loadDormant(db) }
                // Nothing of any channel's passes is in memory: each channel's are learnt as it loads.
                ledger = PassLedger(stored: [])
                return state
            }
        } catch {
            throw Self.storageError(error, path: directory.databasePath)
        }
    }

    /// Users, types, channels with their newest message (one seek of the primary key each), members'
    /// pointers and counts, thread reads with their threads' counts, counters and sequences.
    private static func loadDormant(_ db: Database) throws -> StoredState {
        var rows = StoredStateAssembly(path: "")
        rows.users = try SQLiteTableBinder(StateTables.users).load(db)
        rows.channelTypes = try SQLiteTableBinder(StateTables.channelTypes).load(db)
        let channels = try SQLiteTableBinder(StateTables.channels).load(db)
        var last: [ChannelCID: (position: Int, createdAt: Timestamp, countable: Int)] = [:]
        // Prepared once: a thousand channels are a thousand seeks, not a thousand statements compiled.
        let newest = try db.cachedStatement(
            sql: "SELECT position, created_at, \(StoredStateAssembly.countableThroughSQL) FROM messages WHERE cid = ? ORDER BY position DESC LIMIT 1")
        for channel in channels {
            guard let row = try Row.fetchOne(newest, arguments: [channel.cid.description]) else { continue }
            last[channel.cid] = (row[0], Timestamp(rawValue: row[1]), row[2])
        }
        rows.setChannels(channels, messageCounts: [:])
        rows.threadReads = try SQLiteTableBinder(StateTables.threadReads).load(db)
        rows.threads = try SQLiteTableBinder(StateTables.threads).load(db)
        try rows.beginDormant(lastMessages: last)
        // Streamed into their channels: a member is held once, not also as a row.
        try SQLiteRowReader.forEach(db, sql: "SELECT \(StoredStateAssembly.dormantMemberColumns) FROM members ORDER BY cid, position") { row in
            try rows.appendDormantMember(cid: row.cid(0), userID: row.text(1), readPosition: row.integer(2), lastRead: row.integer(3),
                                         unread: row.integer(4), countableSeen: row.integer(5))
        }
        rows.counters = try SQLiteTableBinder(StateTables.counters).load(db) + Self.journalPositions(db)
        rows.channelSequences = try SQLiteTableBinder(StateTables.channelSequences).load(db)
        return rows.assembleDormant()
    }

    package func loadChannel(_ cid: ChannelCID, messageWindow: Int) throws(StorageError) -> Channel? {
        try checkOpen()
        do {
            let channel = try reader.read { db in try Self.loadChannel(cid, messageWindow: messageWindow, db) }
            if let channel { passLedger.withLock { $0?.learn(channel) } }
            return channel
        } catch {
            throw Self.storageError(error, path: directory.databasePath)
        }
    }

    package func unloaded(_ cids: [ChannelCID]) {
        passLedger.withLock { $0?.forget(cids) }
    }

    /// One channel's rows, put together as ``load(messageWindow:)`` puts every channel's.
    private static func loadChannel(_ cid: ChannelCID, messageWindow: Int, _ db: Database) throws -> Channel? {
        let key: StatementArguments = [cid.description]
        guard let channel = try SQLiteTableBinder(StateTables.channels).load(db, "WHERE cid = ?", arguments: key).first else { return nil }
        var rows = StoredStateAssembly(path: "", messageWindow: messageWindow)
        var counts: [ChannelCID: Int] = [:]
        var idBytes: [ChannelCID: Int] = [:]
        if let last = try Row.fetchOne(db, sql: "SELECT position, length(CAST(id AS BLOB)) FROM messages WHERE cid = ? ORDER BY position DESC LIMIT 1",
                                       arguments: key) {
            counts[cid] = (last[0] as Int) + 1
            idBytes[cid] = last[1] as Int
        }
        rows.setChannels([channel], messageCounts: counts, idBytes: idBytes)
        try loadMessages(db, where: "WHERE cid = ?", arguments: key, into: &rows)
        rows.members = try SQLiteTableBinder(StateTables.members).load(db, "WHERE cid = ? ORDER BY position", arguments: key)
        rows.threadReads = try SQLiteTableBinder(StateTables.threadReads).load(db, "WHERE cid = ?", arguments: key)
        rows.threads = try SQLiteTableBinder(StateTables.threads).load(db, "WHERE cid = ?", arguments: key)
        rows.messageEdits = try SQLiteTableBinder(StateTables.messageEdits).load(db, "WHERE cid = ?", arguments: key)
        rows.reactions = try SQLiteTableBinder(StateTables.reactions).load(db, "WHERE cid = ? ORDER BY position, created_at, user_id, type", arguments: key)
        var state = try rows.assemble()
        try loadPasses(db, where: "WHERE cid = ?", arguments: key, into: &state.snapshot)
        return state.snapshot.channels.first
    }

    /// The journal's positions (``JournalPositions``) as counter rows.
    private static func journalPositions(_ db: Database) throws -> [StateTables.CounterRow] {
        try Row.fetchAll(db, sql: JournalPositions.select).map { (name: $0[0], value: $0[1]) }
    }

    private static func load(_ db: Database, messageWindow: Int) throws -> StoredState {
        var rows = StoredStateAssembly(path: "", messageWindow: messageWindow)
        rows.users = try SQLiteTableBinder(StateTables.users).load(db)
        rows.channelTypes = try SQLiteTableBinder(StateTables.channelTypes).load(db)
        let channels = try SQLiteTableBinder(StateTables.channels).load(db)
        var counts: [ChannelCID: Int] = [:]
        var idBytes: [ChannelCID: Int] = [:]
        let newest = try db.cachedStatement(
            sql: "SELECT position, length(CAST(id AS BLOB)) AS bytes FROM messages WHERE cid = ? ORDER BY position DESC LIMIT 1")
        for channel in channels {  // one seek of the primary key each
            let last = try Row.fetchOne(newest, arguments: [channel.cid.description])
            if let last {
                counts[channel.cid] = (last["position"] as Int) + 1
                idBytes[channel.cid] = last["bytes"] as Int
            }
        }
        rows.setChannels(channels, messageCounts: counts, idBytes: idBytes)
        try loadMessages(db, into: &rows)
        rows.members = try SQLiteTableBinder(StateTables.members).load(db, "ORDER BY cid, position")
        rows.threadReads = try SQLiteTableBinder(StateTables.threadReads).load(db)
        rows.threads = try SQLiteTableBinder(StateTables.threads).load(db)
        rows.messageEdits = try SQLiteTableBinder(StateTables.messageEdits).load(db)
        rows.reactions = try SQLiteTableBinder(StateTables.reactions).load(db, "ORDER BY cid, position, created_at, user_id, type")
        rows.counters = try SQLiteTableBinder(StateTables.counters).load(db) + Self.journalPositions(db)
        rows.channelSequences = try SQLiteTableBinder(StateTables.channelSequences).load(db)
        var state = try rows.assemble()
        try loadPasses(db, into: &state.snapshot)
        return state
    }

    /// Streams `messages` into their channels: a loaded message is held once, not also as a row. Read
    /// column by column (a row per message is most of a start-up), as ``StateTables/messages`` decodes;
    /// archived texts are not read.
    private static func loadMessages(_ db: Database, where clause: String = "", arguments: StatementArguments = StatementArguments(),
                                     into rows: inout StoredStateAssembly) throws {
        let table = StateTables.messages
        let names = table.columns.map(\.name)
        func column(_ name: String) -> Int32 { Int32(names.firstIndex(of: name)!) }
        let (cid, position, id, user, text, type) = (column("cid"), column("position"), column("id"), column("user_id"), column("text"), column("type"))
        let (createdAt, parent, shown, silent) = (column("created_at"), column("parent_id"), column("show_in_channel"), column("silent"))
        let countableBefore = column("countable_before")
        try SQLiteRowReader.forEach(db, sql: table.select(clause + " ORDER BY cid, position"), arguments: arguments) { row in
            let messageCID = try row.cid(cid)
            let at = Int(row.integer(position))
            let message = Message(
                id: row.text(id), cid: messageCID, userID: row.text(user), text: rows.holdsText(of: messageCID, at: at) ? row.text(text) : "",
                kind: Message.Kind(rawValue: row.text(type)) ?? .regular, createdAt: Timestamp(rawValue: row.integer(createdAt)),
                parentID: row.optionalText(parent), showInChannel: row.boolean(shown), silent: row.boolean(silent))
            try rows.appendMessage(message, at: at, countableBefore: Int(row.integer(countableBefore)))
        }
    }

    /// Appends the rows of `pointer_passes`, in the order they were written, to their members' passes
    /// (column by column: a message makes one or two).
    /// - Throws: ``StorageError/corrupt(path:reason:)`` for a pass of no member, of an unknown kind, or
    ///   one that does not reach further than the member's pass before it.
    private static func loadPasses(_ db: Database, where clause: String = "", arguments: StatementArguments = StatementArguments(),
                                   into snapshot: inout ReceiptsSnapshot) throws {
        let channelIndex = Dictionary(uniqueKeysWithValues: snapshot.channels.enumerated().map { ($0.element.cid, $0.offset) })
        let table = StateTables.pointerPasses
        let names = table.columns.map(\.name)
        func column(_ name: String) -> Int32 { Int32(names.firstIndex(of: name)!) }
        let (cidColumn, user, kindColumn, position, at) = (column("cid"), column("user_id"), column("kind"), column("position"), column("at"))
        var last: (cid: ChannelCID, index: Int)?
        try SQLiteRowReader.forEach(db, sql: table.select(clause + " ORDER BY seq"), arguments: arguments) { row in
            let cid = try row.cid(cidColumn), userID = row.text(user), code = row.integer(kindColumn)
            guard let kind = PointerPassKind(rawValue: code) else { throw StorageError.corrupt(path: "", reason: "pointer pass of kind \(code)") }
            let index: Int
            if let last, last.cid == cid {
                index = last.index
            } else {
                guard let found = channelIndex[cid] else { throw StorageError.corrupt(path: "", reason: "pointer pass of \(userID), not a member of \(cid)") }
                index = found
                last = (cid, found)
            }
            let pass = PointerPass(position: Int(row.integer(position)), at: Timestamp(rawValue: row.integer(at)))
            try snapshot.channels[index].appendStored(pass, kind: kind, of: userID)
        }
    }

    // MARK: Writing

    package func commit(_ batch: CommitBatch) throws(StorageError) {
        try checkOpen()
        do {
            try passLedger.withLock { ledger in
                do {
                    try queue.write { db in
                        if ledger == nil { ledger = try Self.storedPasses(db) }
                        try Self.write(batch, passes: &ledger!, to: db)
                    }
                } catch {
                    // The transaction rolled back; the ledger may have counted its passes.
                    ledger = nil
                    throw error
                }
            }
        } catch {
            // The database and the server's memory may now disagree: no further commit is accepted.
            state.withLock { $0 = .failed }
            throw .commitFailed(reason: "\(error)")
        }
    }

    /// The ledger of the passes `pointer_passes` holds (positions only grow, so the last is the largest).
    private static func storedPasses(_ db: Database) throws -> PassLedger {
        var rows: [(cid: ChannelCID, userID: String, kind: PointerPassKind, stored: PassLedger.Stored)] = []
        let cursor = try GRDB.Row.fetchCursor(db, sql: "SELECT cid, user_id, kind, COUNT(*), MAX(position) FROM pointer_passes GROUP BY cid, user_id, kind")
        while let row = try cursor.next() {
            let text: String = row[0], code: Int64 = row[2]
            guard let cid = ChannelCID(text), let kind = PointerPassKind(rawValue: code) else {
                throw StorageError.corrupt(path: "", reason: "pointer passes of cid \(text), kind \(code)")
            }
            rows.append((cid, row[1], kind, PassLedger.Stored(count: row[3], lastPosition: row[4])))
        }
        return PassLedger(stored: rows)
    }

    /// Writes the batch's rows: journal entries and events, the changed state rows (a rewritten
    /// channel's members and thread reads deleted and written again, a changed member's read state
    /// updated; new pointer passes appended, and the passes of members who left deleted), counters and
    /// sequences.
    private static func write(_ batch: CommitBatch, passes ledger: inout PassLedger, to db: Database) throws {
        let journal = SQLiteTableBinder(StateTables.journal), events = SQLiteTableBinder(StateTables.journalEvents)
        try journal.write(batch.entries, .insert, in: db)
        let eventRows = JournalEventRow.writing(batch.entries)
        try events.write(eventRows, .insert, in: db)
        try SQLiteTableBinder(StateTables.journalChannels).write(JournalEventRow.channelObjects(of: eventRows), .insertMissing, in: db)
        let users = SQLiteTableBinder(StateTables.users), types = SQLiteTableBinder(StateTables.channelTypes)
        try users.write(batch.users, .upsert, in: db)
        try types.write(batch.channelTypes, .upsert, in: db)
        let channels = SQLiteTableBinder(StateTables.channels), members = SQLiteTableBinder(StateTables.membersWithoutPasses)
        let threadReads = SQLiteTableBinder(StateTables.threadReads)
        // Rows of members whose stored passes are not the start of theirs are deleted as found; every
        // new pass is inserted once, at the end.
        var newPasses: [StateTables.PassRow] = []
        for channel in batch.channels {
            try channels.write([channel], .upsert, in: db)
            try db.execute(sql: "DELETE FROM members WHERE cid = ?", arguments: [channel.cid.description])
            let countable = channel.messages.countableCount
            let rows = channel.memberOrder.enumerated().map {
                (cid: channel.cid, position: $0.offset, member: channel.members[$0.element]!, countableSeen: countable)
            }
            try members.write(rows, .upsert, in: db)
            try Self.deletePasses(of: ledger.forgetFormerMembers(of: channel), in: channel.cid, db)
            for row in rows { newPasses += try Self.unstoredPasses(of: row.member, in: channel.cid, ledger: &ledger, db) }
            try db.execute(sql: "DELETE FROM thread_reads WHERE cid = ?", arguments: [channel.cid.description])
            try threadReads.write(ThreadReadRow.all(of: channel), .upsert, in: db)
        }
        try threadReads.write(batch.threadReads, .upsert, in: db)
        try SQLiteTableBinder(StateTables.threads).write(batch.threads, .upsert, in: db)
        try members.update(batch.members.lazy.map { (cid: $0.cid, position: 0, member: $0.member, countableSeen: $0.countableSeen) },
                           columns: StateTables.memberReadStateUpdateWithoutPasses, in: db)
        for (cid, member, _) in batch.members { newPasses += try Self.unstoredPasses(of: member, in: cid, ledger: &ledger, db) }
        try SQLiteTableBinder(StateTables.pointerPasses).write(newPasses, .insert, in: db)
        let messages = SQLiteTableBinder(StateTables.messages)
        try messages.write(batch.messages, .insert, in: db)
        try SQLiteTableBinder(StateTables.messageEdits).write(batch.messageEdits, .upsert, in: db)
        for (cid, position, _) in batch.messageReactions {
            try db.execute(sql: "DELETE FROM reactions WHERE cid = ? AND position = ?", arguments: [cid.description, Int64(position)])
        }
        try SQLiteTableBinder(StateTables.reactions).write(batch.reactionRows, .insert, in: db)
        try SQLiteTableBinder(StateTables.channelSequences).write(batch.channelSequenceRows, .upsert, in: db)
    }

    /// The passes of `member` to append; when its stored rows are not the start of its passes, they are
    /// deleted first and all of its passes are returned.
    private static func unstoredPasses(of member: Member, in cid: ChannelCID, ledger: inout PassLedger,
                                       _ db: Database) throws -> [StateTables.PassRow] {
        switch ledger.write(of: member, in: cid) {
        case .append(let read, let delivered):
            return passRows(member.userID, in: cid, read: read, delivered: delivered)
        case .rewrite:
            try deletePasses(of: [member.userID], in: cid, db)
            return passRows(member.userID, in: cid, read: member.read.readPasses[...], delivered: member.read.deliveredPasses[...])
        }
    }

    /// Deletes the pointer passes of `userIDs` in `cid` (through the channel's index).
    private static func deletePasses(of userIDs: [String], in cid: ChannelCID, _ db: Database) throws {
        for start in stride(from: 0, to: userIDs.count, by: 32) {
            let chunk = userIDs[start..<min(start + 32, userIDs.count)]
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            try db.execute(sql: "DELETE FROM pointer_passes WHERE cid = ? AND user_id IN (\(placeholders))",
                           arguments: StatementArguments([cid.description] + Array(chunk)))
        }
    }

    /// Rows of `read` and `delivered` passes of `userID`, read pointer's first.
    private static func passRows(_ userID: String, in cid: ChannelCID, read: Slice<PointerPasses>,
                                 delivered: Slice<PointerPasses>) -> [StateTables.PassRow] {
        read.map { (cid, userID, .read, $0) } + delivered.map { (cid, userID, .delivered, $0) }
    }

    // MARK: Journal

    package func journal(after seq: Int64, limit: Int) throws(StorageError) -> [JournalEntry] {
        try checkOpen()
        do {
            return try queue.read { db in
                var entries = try SQLiteTableBinder(StateTables.journal).load(db, "WHERE seq > ? ORDER BY seq LIMIT ?", arguments: [seq, limit])
                guard let first = entries.first?.seq, let last = entries.last?.seq else { return entries }
                let index = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($0.element.seq, $0.offset) })
                for row in try SQLiteTableBinder(StateTables.journalEvents).load(
                    db, "WHERE command_seq BETWEEN ? AND ? ORDER BY seq", arguments: [first, last]) {
                    guard let position = index[row.commandSeq] else { continue }
                    entries[position].append(row.event)
                }
                // A `send_message` is kept without the text its message's row holds (committed with it).
                try JournalEntry.restoreTexts(Self.storedMessages(JournalEntry.textPositions(in: entries), db), in: &entries)
                let messages = try Self.storedMessages(JournaledMessage.positions(in: entries.flatMap(\.events)), db)
                let objects = try Self.channelObjects(JournaledChannel.keys(in: entries.flatMap(\.events)), db)
                for position in entries.indices {
                    try JournaledMessage.attach(messages, to: &entries[position].events)
                    try JournaledChannel.attach(objects, to: &entries[position].events)
                }
                return entries
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw .unavailable(reason: "\(error)")
        }
    }

    /// What retention removed from the journal: the commands before its oldest or its sweep's place
    /// (``JournalPruning``), and each channel's events before its oldest (all of a channel's events
    /// when none is left).
    package func prunedHistory() throws(StorageError) -> PrunedHistory {
        try checkOpen()
        do {
            return try queue.read { db in
                let lastSeq = try Int64.fetchOne(db, sql: JournalPositions.lastSeq) ?? 0
                let oldest = try Int64.fetchOne(db, sql: "SELECT min(seq) FROM journal") ?? lastSeq + 1
                let swept = try Int64.fetchOne(db, sql: "SELECT value FROM counters WHERE name = ?", arguments: [JournalPruning.sweptThrough]) ?? 0
                let before = max(oldest, swept + 1)
                var history = PrunedHistory(commandsBefore: before > 1 ? before : nil)
                for row in try Row.fetchAll(db, sql: """
                    SELECT cid, last_seq, (SELECT min(channel_seq) FROM journal_events e WHERE e.cid = s.cid) FROM channel_sequences s ORDER BY cid
                    """) {
                    let text: String = row[0]
                    let last: Int64 = row[1]
                    let first: Int64? = row[2]
                    let through = (first ?? last + 1) - 1
                    guard through > 0, let cid = ChannelCID(text) else { continue }
                    history.channels.append(.init(cid: cid, throughChannelSeq: through))
                }
                return history
            }
        } catch {
            throw .unavailable(reason: "\(error)")
        }
    }

    package func channelEvents(_ cid: ChannelCID, after: Int64, through: Int64, limit: Int, maxBytes: Int) throws(StorageError) -> [JournalEvent] {
        try checkOpen()
        do {
            return try reader.read { db in
                var events: [JournalEvent] = []
                var commandSeqs: [Int64] = []
                var bytes = 0
                try SQLiteTableBinder(StateTables.journalEvents).prefix(
                    db, "WHERE cid = ? AND channel_seq > ? AND channel_seq <= ? ORDER BY channel_seq LIMIT ?",
                    arguments: [cid.description, after, through, Int64(clamping: limit)]
                ) { (row: JournalEventRow) in
                    // The whole event's size: with the message or channel object it is sent with.
                    let size = row.event.json.count + (row.event.message?.length ?? 0) + (row.event.channel?.length ?? 0)
                    guard events.isEmpty || bytes + size <= maxBytes else { return false }
                    bytes += size
                    events.append(row.event)
                    commandSeqs.append(row.commandSeq)
                    return true
                }
                try Self.attachEntries(commandSeqs, to: &events, db)
                try JournaledMessage.attach(Self.storedMessages(JournaledMessage.positions(in: events), db), to: &events)
                try JournaledChannel.attach(Self.channelObjects(JournaledChannel.keys(in: events), db), to: &events)
                return events
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw .unavailable(reason: "\(error)")
        }
    }

    /// Tells each of `events` where its entry (`commandSeqs`, in the same order) is in its stream.
    private static func attachEntries(_ commandSeqs: [Int64], to events: inout [JournalEvent], _ db: Database) throws {
        var positions: [Int64: StreamPosition] = [:]
        for chunk in stride(from: 0, to: commandSeqs.count, by: 500) {
            let part = Array(Set(commandSeqs[chunk..<min(commandSeqs.count, chunk + 500)]))
            let marks = Array(repeating: "?", count: part.count).joined(separator: ",")
            for row in try GRDB.Row.fetchAll(db, sql: "SELECT seq, stream, stream_seq FROM journal WHERE seq IN (\(marks))",
                                             arguments: StatementArguments(part)) {
                let seq: Int64 = row[0], stream: Int64 = row[1], number: Int64 = row[2]
                positions[seq] = StreamPosition(stream: try StateTables.stream(stream), number: number)
            }
        }
        for index in events.indices { events[index].entry = positions[commandSeqs[index]] }
    }

    /// The messages at `wanted` (per channel, by position), read in `db`: archived texts, and what journaled
    /// events and commands keep once (``JournaledMessage``, ``JournalEntry/messagePosition``).
    private static func storedMessages(_ wanted: [ChannelCID: [Int]], _ db: Database) throws -> [ChannelCID: [Int: Message]] {
        var messages: [ChannelCID: [Int: Message]] = [:]
        for (cid, positions) in wanted {
            // At most SQLite's bound-variable limit a statement.
            for chunk in stride(from: 0, to: positions.count, by: 500) {
                let part = positions[chunk..<min(positions.count, chunk + 500)]
                let marks = Array(repeating: "?", count: part.count).joined(separator: ",")
                var arguments: [any DatabaseValueConvertible] = [cid.description]
                arguments += part.map { Int64($0) }
                for row in try SQLiteTableBinder(StateTables.messages).load(
                    db, "WHERE cid = ? AND position IN (\(marks))", arguments: StatementArguments(arguments)) {
                    messages[cid, default: [:]][row.position] = row.message
                }
            }
        }
        return messages
    }

    /// Removes the channel objects of `cids` that no event left refers to: those older than the
    /// newest one at or before the channel's oldest event (all but the newest when none is left).
    /// References are monotonic in a channel (``JournaledChannel``), so no event left needs them.
    private static func pruneChannelObjects(of cids: [String], _ db: Database) throws {
        for cid in cids {
            try db.execute(sql: """
                DELETE FROM journal_channels WHERE cid = ? AND since < (SELECT max(since) FROM journal_channels WHERE cid = ?
                    AND since <= coalesce((SELECT min(channel_seq) FROM journal_events WHERE cid = ?), \(Int64.max)))
                """, arguments: [cid, cid, cid])
        }
    }

    /// The channel objects at `wanted` (per channel, by the `since` that keys them), read in `db`.
    private static func channelObjects(_ wanted: [ChannelCID: Set<Int64>], _ db: Database) throws -> [ChannelCID: [Int64: [UInt8]]] {
        var objects: [ChannelCID: [Int64: [UInt8]]] = [:]
        for (cid, keys) in wanted {
            let sorted = keys.sorted()
            // At most SQLite's bound-variable limit a statement.
            for chunk in stride(from: 0, to: sorted.count, by: 500) {
                let part = sorted[chunk..<min(sorted.count, chunk + 500)]
                let marks = Array(repeating: "?", count: part.count).joined(separator: ",")
                var arguments: [any DatabaseValueConvertible] = [cid.description]
                arguments += part.map { $0 }
                for row in try SQLiteTableBinder(StateTables.journalChannels).load(
                    db, "WHERE cid = ? AND since IN (\(marks))", arguments: StatementArguments(arguments)) {
                    objects[cid, default: [:]][row.since] = row.object
                }
            }
        }
        return objects
    }

    package func archivedTexts(_ cid: ChannelCID, positions: [Int]) throws(StorageError) -> [Int: String] {
        try checkOpen()
        guard !positions.isEmpty else { return [:] }
        do {
            return try reader.read { db in
                // The current texts: an edit's where there is one, else the text sent.
                var texts: [Int: String] = [:]
                for chunk in stride(from: 0, to: positions.count, by: 500) {
                    let part = positions[chunk..<min(positions.count, chunk + 500)]
                    let marks = Array(repeating: "?", count: part.count).joined(separator: ",")
                    var arguments: [any DatabaseValueConvertible] = [cid.description]
                    arguments += part.map { Int64($0) }
                    let rows = try Row.fetchAll(db, sql: """
                        SELECT m.position, coalesce(e.text, m.text) FROM messages m
                        LEFT JOIN message_edits e ON e.cid = m.cid AND e.position = m.position
                        WHERE m.cid = ? AND m.position IN (\(marks))
                        """, arguments: StatementArguments(arguments))
                    for row in rows { texts[Int(row[0] as Int64)] = row[1] }
                }
                return texts
            }
        } catch {
            throw .unavailable(reason: "\(error)")
        }
    }

    package func channels(holdingMessage id: String) throws(StorageError) -> [ChannelCID] {
        try checkOpen()
        let cids: [String]
        do {
            cids = try reader.read { db in try String.fetchAll(db, sql: "SELECT cid FROM messages WHERE id = ?", arguments: [id]) }
        } catch {
            throw .unavailable(reason: "looking for message \(id): \(error)")
        }
        return try cids.map { text throws(StorageError) in try StateTables.cid(text) }.sorted()
    }

    package func prune(_ policy: RetentionPolicy, now: Timestamp, limit: Int) throws(StorageError) -> (entries: Int, events: Int) {
        try checkOpen()
        do {
            return try queue.write { db in
                var entries = 0
                var events = 0
                try db.execute(sql: JournalPositions.keep)
                if let age = policy.maxAgeSeconds {
                    // The oldest entries first, with their events.
                    let cutoff = now.rawValue - age * 1_000_000
                    let oldest = "SELECT seq FROM journal WHERE at < ? ORDER BY seq LIMIT ?"
                    let carriers = try String.fetchAll(db, sql: """
                        SELECT DISTINCT cid FROM journal_events WHERE command_seq IN (\(oldest)) AND channel_since IS NOT NULL
                        """, arguments: [cutoff, limit])
                    try db.execute(sql: "DELETE FROM journal_events WHERE command_seq IN (\(oldest))", arguments: [cutoff, limit])
                    events += db.changesCount
                    try Self.pruneChannelObjects(of: carriers, db)
                    try db.execute(sql: "DELETE FROM journal WHERE seq IN (\(oldest))", arguments: [cutoff, limit])
                    entries += db.changesCount
                }
                if let keep = policy.maxEventsPerChannel {
                    let counter = "SELECT value FROM counters WHERE name = ?"
                    let swept = try Int64.fetchOne(db, sql: counter, arguments: [JournalPruning.sweptThrough]) ?? 0
                    var target = try Int64.fetchOne(db, sql: counter, arguments: [JournalPruning.sweepTarget]) ?? 0
                    // Channel by channel, each a range of its `journal_events_channel` index.
                    let channels = try Row.fetchAll(db, sql: "SELECT cid, last_seq FROM channel_sequences WHERE last_seq > ?", arguments: [keep])
                    for channel in channels where entries + events < limit {
                        let cid: String = channel[0]
                        let lastSeq: Int64 = channel[1]
                        let cutoff = lastSeq - Int64(keep)
                        guard let first = try Int64.fetchOne(db, sql: "SELECT min(channel_seq) FROM journal_events WHERE cid = ?", arguments: [cid]),
                              first <= cutoff else { continue }
                        let last = min(cutoff, first + Int64(limit - entries - events) - 1)
                        let range: StatementArguments = [cid, first, last]
                        let commands = try Int64.fetchAll(db, sql: "SELECT DISTINCT command_seq FROM journal_events WHERE cid = ? AND channel_seq BETWEEN ? AND ?", arguments: range)
                        try db.execute(sql: "DELETE FROM journal_events WHERE cid = ? AND channel_seq BETWEEN ? AND ?", arguments: range)
                        events += db.changesCount
                        try Self.pruneChannelObjects(of: [cid], db)
                        // Commands the sweep has passed already go now if none of their events is left.
                        for command in commands where command <= swept {
                            try db.execute(sql: "DELETE FROM journal WHERE seq = ? AND \(JournalPruning.noEventLeft)", arguments: [command])
                            entries += db.changesCount
                        }
                        target = max(target, commands.max() ?? 0)
                    }
                    // The commands up to the newest one whose events were removed, that have no event
                    // left: at most `limit` of them examined per call.
                    if target > swept {
                        let through = try Int64.fetchOne(db, sql: "SELECT seq FROM journal WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT 1 OFFSET ?",
                                                         arguments: [swept, target, limit - 1]) ?? target
                        try db.execute(sql: "DELETE FROM journal WHERE seq > ? AND seq <= ? AND \(JournalPruning.noEventLeft)", arguments: [swept, through])
                        entries += db.changesCount
                        try db.execute(sql: "INSERT INTO counters (name, value) VALUES (?, ?), (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                                       arguments: [JournalPruning.sweptThrough, through, JournalPruning.sweepTarget, target])
                    }
                }
                return (entries, events)
            }
        } catch {
            throw .unavailable(reason: "\(error)")
        }
    }
}
