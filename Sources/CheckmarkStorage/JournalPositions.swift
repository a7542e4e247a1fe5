/// Where the journal stands, for both stores: its newest entry's sequence (`last_seq`) and time
/// (`clock`), and its newest event's sequence (`last_event_seq`). They are read from the journal at
/// load, never written by a commit, so that no commit writes a row every other commit writes too.
/// Retention may remove the newest entries (by age): it keeps where the journal stood as named
/// counters first, and a load takes the greater of the two.
enum JournalPositions {
    /// SQL: the positions as `(name, value)` rows, 0 for an empty journal.
    static let select = """
        SELECT 'last_seq' AS name, coalesce((SELECT max(seq) FROM journal), 0) AS value
        UNION ALL SELECT 'last_event_seq', coalesce((SELECT max(seq) FROM journal_events), 0)
        UNION ALL SELECT 'clock', coalesce((SELECT at FROM journal ORDER BY seq DESC LIMIT 1), 0)
        """

    /// SQL: keeps the positions as counters (never lowering one), before retention removes entries.
    static let keep = """
        INSERT INTO counters (name, value) SELECT name, value FROM (\(select)) AS positions WHERE true
        ON CONFLICT (name) DO UPDATE SET value = CASE WHEN excluded.value > counters.value THEN excluded.value ELSE counters.value END
        """
}
