/// Decides, from each commit's write-ahead log size, whether the log is checkpointed and by whom
/// (``SQLiteCheckpointPolicy``). Values in, a decision out: ``SQLiteCheckpointer`` performs it.
///
/// A background checkpoint starts at ``SQLiteCheckpointPolicy/backgroundPages`` and then once per
/// that many more pages, not after every commit: commits made while a checkpoint runs keep the log
/// from restarting, and without the step every later commit would start another checkpoint and its
/// fsync. The log restarting from its beginning (a commit leaving it no larger than the one before:
/// every commit adds pages) starts the count again, however large the commit that restarted it. At
/// ``SQLiteCheckpointPolicy/limitPages`` the committing connection checkpoints itself.
package struct SQLiteCheckpointSchedule: Sendable {
    package enum Decision: Equatable, Sendable { case none, startBackground, checkpointInCommit }

    package let policy: SQLiteCheckpointPolicy
    /// Log pages at which the next background checkpoint starts.
    package private(set) var nextBackgroundAt: Int
    /// The log's size after the commit before.
    private var lastLogPages = 0

    package init(policy: SQLiteCheckpointPolicy) {
        self.policy = policy
        nextBackgroundAt = policy.backgroundPages
    }

    /// A commit left the log at `logPages`; `backgroundRunning` tells whether a background
    /// checkpoint is still under way (then none starts).
    package mutating func committed(logPages: Int, backgroundRunning: Bool) -> Decision {
        defer { lastLogPages = logPages }
        if logPages >= policy.limitPages { return .checkpointInCommit }
        // The log restarted (every commit adds pages). A commit of more pages than the threshold
        // restarts it above the threshold, so the size alone cannot tell.
        if logPages <= lastLogPages { nextBackgroundAt = policy.backgroundPages }
        if logPages < policy.backgroundPages { return .none }
        guard logPages >= nextBackgroundAt, !backgroundRunning else { return .none }
        nextBackgroundAt = logPages + policy.backgroundPages
        return .startBackground
    }
}
