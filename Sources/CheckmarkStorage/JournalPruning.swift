/// How count retention removes commands from the journal, for both stores: a command goes once
/// none of its events is left, and a command that journaled no event goes with the removed
/// commands around it. A sweep walks the command sequence up to the newest command whose events
/// retention removed; two named counters keep its place between prunes.
enum JournalPruning {
    /// Counter: every command at or below this sequence still in the journal has an event left.
    static let sweptThrough = "journal_swept_through"
    /// Counter: the newest command some of whose events retention removed; the sweep's goal.
    static let sweepTarget = "journal_sweep_target"
    /// SQL condition on a `journal` row: none of its events is left.
    static let noEventLeft = "NOT EXISTS (SELECT 1 FROM journal_events e WHERE e.command_seq = journal.seq)"
}
