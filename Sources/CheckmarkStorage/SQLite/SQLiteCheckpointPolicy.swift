/// When the write-ahead log is copied back into the database file (a checkpoint), and by whom.
///
/// SQLite's own rule checkpoints inside the commit that brings the log to 1,000 pages, so that one
/// commit, and every event waiting on it, also waits for the copy and the database file's fsync
/// (commits of 50-100 ms, and a fan-out p99 of 76-690 ms in five runs of eleven, measured on a
/// 2-core cloud machine at 50 messages/s; BENCHMARKS.md). Here that commit only wakes the
/// background checkpointer; a commit waits only when the log has reached ``limitPages`` because
/// background checkpoints fell behind, which keeps the log, and the disk it takes, bounded.
package struct SQLiteCheckpointPolicy: Sendable, Equatable {
    /// Log pages at which a background checkpoint starts (setting `wal_checkpoint_pages`).
    package var backgroundPages: Int
    /// Log pages at which the commit that reaches them checkpoints before it returns (setting
    /// `max_wal_pages`): the log grows past it by at most one batch.
    package var limitPages: Int

    package static let defaultBackgroundPages = 1000
    package static let defaultLimitPages = 16000

    package init(backgroundPages: Int = Self.defaultBackgroundPages, limitPages: Int = Self.defaultLimitPages) {
        self.backgroundPages = backgroundPages
        self.limitPages = limitPages
    }
}
