import CheckmarkCore

/// Where the journal stands, for both stores: its newest entry's sequence (`last_seq`) and time
/// (`clock`), its newest event's sequence (`last_event_seq`), and each stream's newest number
/// (`stream:<n>`, for the streams that have entries: ``JournalStream``). They are read from the
/// journal at load, never written by a commit, so that no commit writes a row every other commit
/// writes too. Retention may remove the newest entries (by age): it keeps where the journal stood
/// as named counters first, and a load takes the greater of the two.
enum JournalPositions {
    /// How a stream's newest number is named: this, then the stream's number.
    private static let streamPrefix = "stream:"

    /// The stream a position's name is of; nil for another position or counter.
    static func stream(named name: String) -> JournalStream? {
        guard name.hasPrefix(streamPrefix), let number = Int(name.dropFirst(streamPrefix.count)) else { return nil }
        return JournalStream(rawValue: number)
    }

    /// SQL: the numbers of the streams, as `streams(n)`; one index look-up each below, instead of a
    /// scan of the journal.
    private static let streams = """
        WITH RECURSIVE streams(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM streams WHERE n < \(JournalStream.count - 1))
        """

    /// SQL: the positions as `(name, value)` rows (each sequence 0 for an empty journal).
    private static let rows = """
        SELECT name, value FROM (
            SELECT 'last_seq' AS name, coalesce((SELECT max(seq) FROM journal), 0) AS value
            UNION ALL SELECT 'last_event_seq', coalesce((SELECT max(seq) FROM journal_events), 0)
            UNION ALL SELECT 'clock', coalesce((SELECT at FROM journal ORDER BY seq DESC LIMIT 1), 0)
            UNION ALL SELECT '\(streamPrefix)' || n, (SELECT max(stream_seq) FROM journal WHERE stream = n) FROM streams
        ) AS positions WHERE value IS NOT NULL
        """

    /// SQL: the positions as `(name, value)` rows.
    static let select = streams + "\n" + rows

    /// SQL: the journal's last sequence, the greater of the journal's own and what retention kept.
    static let lastSeq = """
        SELECT max(value) FROM (SELECT coalesce(max(seq), 0) AS value FROM journal
            UNION ALL SELECT value FROM counters WHERE name = 'last_seq') AS positions
        """

    /// SQL: keeps the positions as counters (never lowering one), before retention removes entries.
    static let keep = """
        \(streams)
        INSERT INTO counters (name, value) \(rows)
        ON CONFLICT (name) DO UPDATE SET value = CASE WHEN excluded.value > counters.value THEN excluded.value ELSE counters.value END
        """
}
