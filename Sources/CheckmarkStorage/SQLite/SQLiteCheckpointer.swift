import Dispatch
import GRDB
import GRDBSQLite
import Logging
import Synchronization

/// Checkpoints one database's write-ahead log on a thread of its own, as ``SQLiteCheckpointPolicy``
/// says, so that commits do not wait for it. Each checkpoint opens a connection of its own and closes
/// it after (a connection kept open between checkpoints would hold its caches for nothing).
///
/// The writer's connection reports every commit's log size (``attach(to:)``); a failed background
/// checkpoint is logged once (and its recovery once) and tried again at the next commit past the
/// threshold: the log still holds every committed row, so nothing is lost, and at the limit the
/// writer's own commit checkpoints.
final class SQLiteCheckpointer: Sendable {
    private let path: String
    private let thread = DispatchQueue(label: "checkmark.sqlite-checkpoint")
    private let scheduled = Atomic(false)
    /// Only the writer's thread uses it (from its commits).
    private let schedule: Mutex<SQLiteCheckpointSchedule>
    private let closed = Atomic(false)
    private let failing = Atomic(false)
    /// Whether a commit has found the log at the limit (logged the first time only).
    private let reachedLimit = Atomic(false)
    private let logger: Logger?
    /// Checkpoints run in the background, and commits that checkpointed because the log was at the limit.
    private let counts = Mutex((background: 0, atLimit: 0))

    /// Checkpoints the database at `path` (in WAL mode).
    init(path: String, policy: SQLiteCheckpointPolicy, logger: Logger?) {
        self.path = path
        self.logger = logger
        schedule = Mutex(SQLiteCheckpointSchedule(policy: policy))
    }

    /// Checkpoints run so far: in the background, and by commits that found the log at the limit.
    var checkpoints: (background: Int, atLimit: Int) { counts.withLock { $0 } }

    /// Makes the writer's connection report its commits here instead of checkpointing in them.
    /// The checkpointer must outlive the connection's last commit.
    func attach(to db: Database) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_wal_hook(db.sqliteConnection, { context, connection, name, pages in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue()
            checkpointer.committed(logPages: Int(pages), connection: connection, name: name)
            return SQLITE_OK
        }, context)
    }

    /// Stops background checkpoints and waits for one in progress.
    func close() {
        closed.store(true, ordering: .sequentiallyConsistent)
        thread.sync {}
    }

    private func committed(logPages: Int, connection writer: OpaquePointer?, name: UnsafePointer<CChar>?) {
        let running = scheduled.load(ordering: .acquiring)
        switch schedule.withLock({ $0.committed(logPages: logPages, backgroundRunning: running) }) {
        case .none:
            break
        case .startBackground:
            // Only this thread sets it; the background thread clears it when done.
            scheduled.store(true, ordering: .releasing)
            thread.async { self.runBackground() }
        case .checkpointInCommit:
            // The commit already succeeded; a busy checkpointer here means the background one runs.
            if sqlite3_wal_checkpoint_v2(writer, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil) == SQLITE_OK {
                counts.withLock { $0.atLimit += 1 }
            }
            if !reachedLimit.exchange(true, ordering: .relaxed) {
                logger?.warning("sqlite write-ahead log reached max_wal_pages (\(schedule.withLock { $0.policy.limitPages }) pages): background checkpoints fell behind, so commits at the limit checkpoint themselves (logged once)")
            }
        }
    }

    private func runBackground() {
        defer { scheduled.store(false, ordering: .releasing) }
        guard !closed.load(ordering: .sequentiallyConsistent) else { return }
        do {
            try checkpoint()
            counts.withLock { $0.background += 1 }
            if failing.exchange(false, ordering: .relaxed) {
                logger?.notice("sqlite background checkpoint recovered")
            }
        } catch {
            if !failing.exchange(true, ordering: .relaxed) {
                logger?.warning("sqlite background checkpoint failed; retried at the next commit, the commit checkpoints at max_wal_pages: \(error)")
            }
        }
    }

    /// One passive checkpoint on a connection opened for it.
    private func checkpoint() throws(SQLiteCheckpointError) {
        var db: OpaquePointer?
        defer { sqlite3_close_v2(db) }
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { throw Self.error("open", db) }
        // A checkpoint must reach the disk before the log is reused.
        guard sqlite3_exec(db, "PRAGMA synchronous = FULL", nil, nil, nil) == SQLITE_OK else { throw Self.error("PRAGMA synchronous", db) }
        let code = sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        // Busy: the writer's commit at the limit is checkpointing; this one is not needed.
        guard code == SQLITE_OK || code == SQLITE_BUSY else { throw Self.error("checkpoint", db) }
    }

    private static func error(_ step: String, _ db: OpaquePointer?) -> SQLiteCheckpointError {
        SQLiteCheckpointError(step: step, message: db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "out of memory")
    }
}
