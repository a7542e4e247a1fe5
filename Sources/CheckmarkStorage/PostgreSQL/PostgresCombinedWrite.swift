import PostgresNIO

/// Data-modifying statements gathered into one `WITH w0 AS (…), w1 AS (…) SELECT …` statement, so that
/// a commit's writes to its several tables cost one round trip to the database instead of one each.
/// Each part reads its rows from array parameters (``PostgresArrayColumn``, `unnest`), so the
/// statement's text depends on which tables a commit writes, never on how many rows.
/// The parts run on one snapshot and cannot see each other's rows: they must write different rows
/// (a commit's parts write different tables; a channel rewrite's member delete runs on its own first).
struct PostgresCombinedWrite {
    private(set) var parts: [String] = []
    private(set) var binds = PostgresBindings()
    private(set) var bindCount = 0

    var isEmpty: Bool { parts.isEmpty }

    /// Adds one part over `columns` array parameters: `sql` receives the `unnest($i, …)` that reads
    /// them as rows, and `bind` appends exactly `columns` values.
    mutating func add(columns: Int, _ sql: (_ rows: String) -> String, bind: (inout PostgresBindings) throws -> Void) rethrows {
        let placeholders = (1...columns).map { "$\(bindCount + $0)" }.joined(separator: ", ")
        parts.append(sql("unnest(\(placeholders))"))
        try bind(&binds)
        bindCount += columns
    }

    /// Binds `value` for the final `SELECT` and gives its placeholder.
    mutating func placeholder(binding value: String) -> String {
        binds.append(value)
        bindCount += 1
        return "$\(bindCount)"
    }

    /// The parts as one statement ending in `final` (a `SELECT`).
    func query(final: String) -> PostgresQuery {
        guard !parts.isEmpty else { return PostgresQuery(unsafeSQL: final, binds: binds) }
        let ctes = parts.enumerated().map { "w\($0.offset) AS (\($0.element))" }.joined(separator: ", ")
        return PostgresQuery(unsafeSQL: "WITH \(ctes) \(final)", binds: binds)
    }
}
