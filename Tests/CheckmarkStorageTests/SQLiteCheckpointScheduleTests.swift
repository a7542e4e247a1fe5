import CheckmarkStorage
import Testing

/// When a commit's log size starts a background checkpoint, a checkpoint inside the commit, or
/// nothing (``SQLiteCheckpointSchedule``), as transcripts of log sizes.
@Suite("SQLite checkpoint schedule")
struct SQLiteCheckpointScheduleTests {
    typealias Step = (pages: Int, running: Bool, decision: SQLiteCheckpointSchedule.Decision)

    static func run(_ steps: [Step], policy: SQLiteCheckpointPolicy = .init(backgroundPages: 100, limitPages: 1000)) {
        var schedule = SQLiteCheckpointSchedule(policy: policy)
        for (index, step) in steps.enumerated() {
            let decision = schedule.committed(logPages: step.pages, backgroundRunning: step.running)
            #expect(decision == step.decision, "step \(index): \(step.pages) pages")
        }
    }

    @Test func aBackgroundCheckpointStartsAtTheThresholdAndThenOncePerThresholdMore() {
        Self.run([
            (99, false, .none),
            (100, false, .startBackground),
            // The log kept growing while it ran: no checkpoint after every commit.
            (110, false, .none), (150, false, .none), (199, false, .none),
            (200, false, .startBackground),
            (250, false, .none),
        ])
    }

    @Test func noBackgroundCheckpointStartsWhileOneRunsAndTheNextWaitsForItsEnd() {
        Self.run([
            (100, false, .startBackground),
            (200, true, .none),
            (230, false, .startBackground),
            (300, false, .none),
            (330, false, .startBackground),
        ])
    }

    @Test func theLogRestartingStartsTheCountAgain() {
        Self.run([
            (100, false, .startBackground),
            (150, false, .none),
            (3, false, .none),
            (100, false, .startBackground),
        ])
    }

    /// Regression: a log restarted by a commit of more pages than the threshold was not seen as
    /// restarted, so no background checkpoint started again until the log reached the limit, and
    /// then every cycle's commit at the limit checkpointed the whole log itself (`bench-storage
    /// --clients 10000`: commits of ~2,200 pages, 3 background checkpoints and 14 at the limit).
    @Test func aLogRestartedByACommitLargerThanTheThresholdStartsTheCountAgain() {
        Self.run([
            (250, false, .startBackground),
            (500, false, .startBackground),
            (750, false, .startBackground),
            (1000, false, .checkpointInCommit),
            (250, false, .startBackground),
            (400, true, .none),
            (550, false, .startBackground),
        ])
    }

    @Test func atTheLimitTheCommitCheckpointsWhateverRuns() {
        Self.run([
            (100, false, .startBackground),
            (999, true, .none),
            (1000, true, .checkpointInCommit),
            (1200, false, .checkpointInCommit),
        ])
    }
}
