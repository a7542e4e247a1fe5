/// Decides, from each commit's write-ahead log size, whether the log is checkpointed and by whom
/// (``SQLiteCheckpointPolicy``). Values in, a decision out: ``SQLiteCheckpointer`` performs it.
///
/// A background checkpoint starts at ``SQLiteCheckpointPolicy/backgroundPages`` and then once per
/// that many more pages, not after every commit: commits made while a checkpoint runs keep the log
/// from restarting, and without the step every later commit would start another checkpoint and its
/// fsync. The log restarting from its beginning (fewer pages than the threshold) starts the count
/// again. At ``SQLiteCheckpointPolicy/limitPages`` the committing connection checkpoints itself.
package struct SQLiteCheckpointSchedule: Sendable {
    package enum Decision: Equatable, Sendable { case none, startBackground, checkpointInCommit }

    package let policy: SQLiteCheckpointPolicy
    /// Log pages at which the next background checkpoint starts.
    package private(set) var nextBackgroundAt: Int

    package init(policy: SQLiteCheckpointPolicy) {
        self.policy = policy
        nextBackgroundAt = policy.backgroundPages
    }

    /// A commit left the log at `logPages`; `backgroundRunning` tells whether a background
    /// checkpoint is still under way (then none starts).
    package mutating func committed(logPages: Int, backgroundRunning: Bool) -> Decision {
        if logPages >= policy.limitPages { return .checkpointInCommit }
        if logPages < policy.backgroundPages {
            nextBackgroundAt = policy.backgroundPages
            return .none
        }
        guard logPages >= nextBackgroundAt, !backgroundRunning else { return .none }
        nextBackgroundAt = logPages + policy.backgroundPages
        return .startBackground
    }
}
