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

    @Test func atTheLimitTheCommitCheckpointsWhateverRuns() {
        Self.run([
            (100, false, .startBackground),
            (999, true, .none),
            (1000, true, .checkpointInCommit),
            (1200, false, .checkpointInCommit),
        ])
    }
}
