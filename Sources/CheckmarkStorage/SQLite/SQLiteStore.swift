import CheckmarkCore
import Foundation
import GRDB
import Synchronization

/// The embedded default store: one SQLite database in the data directory, in WAL mode with
/// `synchronous=FULL`, so that a commit that returned survives a killed process and a power cut (the
/// WAL is fsynced at every commit; group commit makes that one fsync per batch, not per confirmation).
public final class SQLiteStore: ReceiptsStore {
    public let directory: DataDirectory
    private let queue: DatabaseQueue
    private let state = Mutex(StoreState.open)

    private enum StoreState { case open, failed, closed }

    /// Opens (creating if needed) the database of `directory` and applies pending migrations.
    /// - Throws: ``StorageError/schemaNewer(path:unknownMigrations:)`` when a newer binary wrote it,
    ///   ``StorageError/corrupt(path:reason:)`` for a damaged or foreign file,
    ///   ``StorageError/unavailable(reason:)`` otherwise.
    public init(directory: DataDirectory) throws(StorageError) {
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
            try queue.read { db in
                let check = try String.fetchOne(db, sql: "PRAGMA quick_check") ?? "no answer"
                guard check == "ok" else { throw StorageError.corrupt(path: path, reason: check) }
            }
        } catch let error as StorageError {
            throw error
        } catch let error as DatabaseError {
            throw Self.openError(error, path: path)
        } catch {
            throw .unavailable(reason: "\(error)")
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

    public var isReady: Bool { state.withLock { $0 == .open } }

    public func close() {
        state.withLock { $0 = .closed }
        try? queue.close()
        directory.release()
    }

    private func checkOpen() throws(StorageError) {
        let current = state.withLock { $0 }
        guard current == .open else { throw current == .closed ? .closed : .commitFailed(reason: "storage failed earlier") }
    }

    // MARK: Loading

    public func load() throws(StorageError) -> StoredState {
        try checkOpen()
        do {
            return try queue.read { db in try Self.load(db) }
        } catch let error as StorageError {
            throw error
        } catch let error as DatabaseError {
            throw Self.openError(error, path: directory.databasePath)
        } catch {
            throw .unavailable(reason: "\(error)")
        }
    }

    private static func load(_ db: Database) throws -> StoredState {
        var snapshot = ReceiptsSnapshot()
        for row in try Row.fetchAll(db, sql: "SELECT * FROM users") {
            let custom: String = row["custom"]
            snapshot.users.append(User(
                id: row["id"], name: row["name"], image: row["image"],
                custom: try CommandCodec.decodeCustom(Array(custom.utf8)),
                privacy: PrivacySettings(readReceipts: row["read_receipts"], deliveryReceipts: row["delivery_receipts"]),
                createdAt: Timestamp(rawValue: row["created_at"]), updatedAt: Timestamp(rawValue: row["updated_at"])))
        }
        for row in try Row.fetchAll(db, sql: "SELECT * FROM channel_types") {
            snapshot.channelTypes.append(ChannelType(
                name: row["name"], readEvents: row["read_events"], deliveryEvents: row["delivery_events"],
                createdAt: Timestamp(rawValue: row["created_at"]), updatedAt: Timestamp(rawValue: row["updated_at"])))
        }
        var channels: [ChannelCID: Channel] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT * FROM channels") {
            let cid = try parseCID(row["cid"])
            channels[cid] = Channel(cid: cid, createdBy: row["created_by"], createdAt: Timestamp(rawValue: row["created_at"]))
        }
        let messages = try Row.fetchCursor(db, sql: "SELECT * FROM messages ORDER BY cid, position")
        while let row = try messages.next() {
            let cid = try parseCID(row["cid"])
            guard channels[cid] != nil else { throw StorageError.corrupt(path: "", reason: "message of unknown channel \(cid)") }
            let position: Int = row["position"]
            guard position == channels[cid]!.messages.count else {
                throw StorageError.corrupt(path: "", reason: "messages of \(cid) have a gap at position \(position)")
            }
            let kind = Message.Kind(rawValue: row["type"]) ?? .regular
            channels[cid]!.messages.append(Message(
                id: row["id"], cid: cid, userID: row["user_id"], text: row["text"], kind: kind,
                createdAt: Timestamp(rawValue: row["created_at"]), parentID: row["parent_id"],
                showInChannel: row["show_in_channel"], silent: row["silent"]))
        }
        let members = try Row.fetchCursor(db, sql: "SELECT * FROM members ORDER BY cid, position")
        while let row = try members.next() {
            let cid = try parseCID(row["cid"])
            guard channels[cid] != nil else { throw StorageError.corrupt(path: "", reason: "member of unknown channel \(cid)") }
            var read = ReadState(joinedAt: Timestamp(rawValue: row["last_read"]), messageCount: row["read_position"])
            read.lastReadMessageID = row["last_read_message_id"]
            read.deliveredPosition = row["delivered_position"]
            read.lastDeliveredAt = (row["last_delivered_at"] as Int64?).map(Timestamp.init(rawValue:))
            read.lastDeliveredMessageID = row["last_delivered_message_id"]
            read.markedUnreadMessageID = row["marked_unread_message_id"]
            read.readPasses = try StoredPasses.decode(row["read_passes"])
            read.deliveredPasses = try StoredPasses.decode(row["delivered_passes"])
            let userID: String = row["user_id"]
            channels[cid]!.members[userID] = Member(userID: userID, createdAt: Timestamp(rawValue: row["created_at"]), read: read)
            channels[cid]!.memberOrder.append(userID)
        }
        for row in try Row.fetchAll(db, sql: "SELECT * FROM thread_reads") {
            let cid = try parseCID(row["cid"])
            guard channels[cid] != nil else { throw StorageError.corrupt(path: "", reason: "thread read of unknown channel \(cid)") }
            let read = ThreadReadState(
                readCount: row["read_count"], lastRead: Timestamp(rawValue: row["last_read"]), lastReadMessageID: row["last_read_message_id"])
            ThreadReadRow(cid: cid, parentID: row["parent_id"], userID: row["user_id"], read: read).restore(into: &channels[cid]!)
        }
        snapshot.channels = channels.values.sorted { $0.cid < $1.cid }
        let counters = try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT name, value FROM counters").map {
            ($0["name"] as String, $0["value"] as Int64)
        })
        snapshot.generatedMessageIDs = Int(counters["generated_message_ids"] ?? 0)
        snapshot.clock = Timestamp(rawValue: counters["clock"] ?? 0)
        var channelSeqs: [ChannelCID: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT cid, last_seq FROM channel_sequences") {
            channelSeqs[try parseCID(row["cid"])] = row["last_seq"]
        }
        return StoredState(
            snapshot: snapshot, lastSeq: counters["last_seq"] ?? 0, lastEventSeq: counters["last_event_seq"] ?? 0,
            channelSeqs: channelSeqs)
    }

    private static func parseCID(_ text: String) throws -> ChannelCID {
        guard let cid = ChannelCID(text) else { throw StorageError.corrupt(path: "", reason: "invalid cid \(text)") }
        return cid
    }

    // MARK: Writing

    public func commit(_ batch: CommitBatch) throws(StorageError) {
        try checkOpen()
        do {
            try queue.write { db in try Self.write(batch, to: db) }
        } catch {
            // The database and the server's memory may now disagree: no further commit is accepted.
            state.withLock { $0 = .failed }
            throw .commitFailed(reason: "\(error)")
        }
    }

    private static func write(_ batch: CommitBatch, to db: Database) throws {
        let insertEntry = try db.cachedStatement(sql: "INSERT INTO journal (seq, at, command) VALUES (?, ?, ?)")
        let insertEvent = try db.cachedStatement(sql: """
            INSERT INTO journal_events (seq, command_seq, cid, channel_seq, type, payload, audience) VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        var channelSeqs: [ChannelCID: Int64] = [:]
        var lastSeq: Int64?
        var lastEventSeq: Int64?
        for entry in batch.entries {
            try insertEntry.execute(arguments: [
                entry.seq, entry.at.rawValue, String(decoding: CommandCodec.encode(entry.command), as: UTF8.self),
            ])
            lastSeq = entry.seq
            for event in entry.events {
                try insertEvent.execute(arguments: [
                    event.seq, entry.seq, event.cid?.description, event.channelSeq, event.type,
                    String(decoding: event.json, as: UTF8.self), event.audience?.storedValue,
                ])
                lastEventSeq = event.seq
                if let cid = event.cid, let seq = event.channelSeq { channelSeqs[cid] = seq }
            }
        }
        if !batch.users.isEmpty {
            let upsert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO users (id, name, image, custom, read_receipts, delivery_receipts, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for user in batch.users {
                try upsert.execute(arguments: [
                    user.id, user.name, user.image, String(decoding: CommandCodec.encodeCustom(user.custom), as: UTF8.self),
                    user.privacy.readReceipts, user.privacy.deliveryReceipts, user.createdAt.rawValue, user.updatedAt.rawValue,
                ])
            }
        }
        if !batch.channelTypes.isEmpty {
            let upsert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO channel_types (name, read_events, delivery_events, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
                """)
            for type in batch.channelTypes {
                try upsert.execute(arguments: [
                    type.name, type.readEvents, type.deliveryEvents, type.createdAt.rawValue, type.updatedAt.rawValue,
                ])
            }
        }
        let upsertMember = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO members (cid, user_id, position, created_at, read_position, last_read, last_read_message_id,
                delivered_position, last_delivered_at, last_delivered_message_id, marked_unread_message_id, read_passes,
                delivered_passes)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        func writeMember(_ member: Member, cid: ChannelCID, position: Int) throws {
            let read = member.read
            try upsertMember.execute(arguments: [
                cid.description, member.userID, position, member.createdAt.rawValue, read.readPosition, read.lastRead.rawValue,
                read.lastReadMessageID, read.deliveredPosition, read.lastDeliveredAt?.rawValue, read.lastDeliveredMessageID,
                read.markedUnreadMessageID, StoredPasses.encode(read.readPasses), StoredPasses.encode(read.deliveredPasses),
            ])
        }
        let upsertThreadRead = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO thread_reads (cid, parent_id, user_id, read_count, last_read, last_read_message_id)
            VALUES (?, ?, ?, ?, ?, ?)
            """)
        func writeThreadRead(_ row: ThreadReadRow) throws {
            try upsertThreadRead.execute(arguments: [
                row.cid.description, row.parentID, row.userID, row.read.readCount, row.read.lastRead.rawValue, row.read.lastReadMessageID,
            ])
        }
        for channel in batch.channels {
            try db.execute(
                sql: "INSERT OR REPLACE INTO channels (cid, created_by, created_at) VALUES (?, ?, ?)",
                arguments: [channel.cid.description, channel.createdBy, channel.createdAt.rawValue])
            try db.execute(sql: "DELETE FROM members WHERE cid = ?", arguments: [channel.cid.description])
            for (position, userID) in channel.memberOrder.enumerated() {
                try writeMember(channel.members[userID]!, cid: channel.cid, position: position)
            }
            try db.execute(sql: "DELETE FROM thread_reads WHERE cid = ?", arguments: [channel.cid.description])
            for row in ThreadReadRow.all(of: channel) { try writeThreadRead(row) }
        }
        for row in batch.threadReads { try writeThreadRead(row) }
        if !batch.members.isEmpty {
            let update = try db.cachedStatement(sql: """
                UPDATE members SET read_position = ?, last_read = ?, last_read_message_id = ?, delivered_position = ?,
                    last_delivered_at = ?, last_delivered_message_id = ?, marked_unread_message_id = ?, read_passes = ?,
                    delivered_passes = ?
                WHERE cid = ? AND user_id = ?
                """)
            for (cid, member) in batch.members {
                let read = member.read
                try update.execute(arguments: [
                    read.readPosition, read.lastRead.rawValue, read.lastReadMessageID, read.deliveredPosition,
                    read.lastDeliveredAt?.rawValue, read.lastDeliveredMessageID, read.markedUnreadMessageID,
                    StoredPasses.encode(read.readPasses), StoredPasses.encode(read.deliveredPasses), cid.description, member.userID,
                ])
            }
        }
        if !batch.messages.isEmpty {
            let insert = try db.cachedStatement(sql: """
                INSERT INTO messages (cid, position, id, user_id, text, type, created_at, parent_id, show_in_channel, silent)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for (position, message) in batch.messages {
                try insert.execute(arguments: [
                    message.cid.description, position, message.id, message.userID, message.text, message.kind.rawValue,
                    message.createdAt.rawValue, message.parentID, message.showInChannel, message.silent,
                ])
            }
        }
        let setCounter = try db.cachedStatement(sql: "INSERT OR REPLACE INTO counters (name, value) VALUES (?, ?)")
        try setCounter.execute(arguments: ["generated_message_ids", batch.generatedMessageIDs])
        try setCounter.execute(arguments: ["clock", batch.clock.rawValue])
        if let lastSeq { try setCounter.execute(arguments: ["last_seq", lastSeq]) }
        if let lastEventSeq { try setCounter.execute(arguments: ["last_event_seq", lastEventSeq]) }
        if !channelSeqs.isEmpty {
            let setSeq = try db.cachedStatement(sql: "INSERT OR REPLACE INTO channel_sequences (cid, last_seq) VALUES (?, ?)")
            for (cid, seq) in channelSeqs { try setSeq.execute(arguments: [cid.description, seq]) }
        }
    }

    // MARK: Journal

    public func journal(after seq: Int64, limit: Int) throws(StorageError) -> [JournalEntry] {
        try checkOpen()
        do {
            return try queue.read { db in
                var entries: [JournalEntry] = []
                var index: [Int64: Int] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT seq, at, command FROM journal WHERE seq > ? ORDER BY seq LIMIT ?", arguments: [seq, limit]) {
                    let text: String = row["command"]
                    let entrySeq: Int64 = row["seq"]
                    index[entrySeq] = entries.count
                    entries.append(JournalEntry(
                        seq: entrySeq, at: Timestamp(rawValue: row["at"]), command: try CommandCodec.decode(Array(text.utf8)), events: []))
                }
                guard let first = entries.first?.seq, let last = entries.last?.seq else { return entries }
                for row in try Row.fetchAll(db, sql: """
                    SELECT seq, command_seq, cid, channel_seq, type, payload, audience FROM journal_events
                    WHERE command_seq BETWEEN ? AND ? ORDER BY seq
                    """, arguments: [first, last]) {
                    guard let position = index[row["command_seq"]] else { continue }
                    entries[position].events.append(Self.event(row))
                }
                return entries
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw .unavailable(reason: "\(error)")
        }
    }

    public func channelEvents(_ cid: ChannelCID, after: Int64, through: Int64) throws(StorageError) -> [JournalEvent] {
        try checkOpen()
        do {
            return try queue.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT seq, cid, channel_seq, type, payload, audience FROM journal_events
                    WHERE cid = ? AND channel_seq > ? AND channel_seq <= ? ORDER BY channel_seq
                    """, arguments: [cid.description, after, through]).map(Self.event)
            }
        } catch {
            throw .unavailable(reason: "\(error)")
        }
    }

    private static func event(_ row: Row) -> JournalEvent {
        let payload: String = row["payload"]
        return JournalEvent(
            seq: row["seq"], cid: (row["cid"] as String?).flatMap(ChannelCID.init), channelSeq: row["channel_seq"],
            type: row["type"], audience: (row["audience"] as String?).flatMap(EventAudience.init(storedValue:)),
            json: Array(payload.utf8))
    }

    public func prune(_ policy: RetentionPolicy, now: Timestamp) throws(StorageError) -> (entries: Int, events: Int) {
        try checkOpen()
        do {
            return try queue.write { db in
                var entries = 0
                var events = 0
                if let age = policy.maxAgeSeconds {
                    let cutoff = now.rawValue - age * 1_000_000
                    try db.execute(sql: "DELETE FROM journal_events WHERE command_seq IN (SELECT seq FROM journal WHERE at < ?)", arguments: [cutoff])
                    events += db.changesCount
                    try db.execute(sql: "DELETE FROM journal WHERE at < ?", arguments: [cutoff])
                    entries += db.changesCount
                }
                if let keep = policy.maxEventsPerChannel {
                    try db.execute(sql: """
                        DELETE FROM journal_events WHERE cid IS NOT NULL AND channel_seq <= (
                            SELECT last_seq FROM channel_sequences WHERE channel_sequences.cid = journal_events.cid) - ?
                        """, arguments: [keep])
                    events += db.changesCount
                }
                return (entries, events)
            }
        } catch {
            throw .unavailable(reason: "\(error)")
        }
    }
}
