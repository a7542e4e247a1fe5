import PostgresNIO

/// Data-modifying statements gathered into one `WITH w0 AS (…), w1 AS (…) SELECT …` statement, so that
/// a commit's writes to its several tables cost one round trip to the database instead of one each.
/// The parts run on one snapshot and cannot see each other's rows: they must write different rows
/// (a commit's parts write different tables; a channel rewrite's member delete runs on its own first).
struct PostgresCombinedWrite {
    /// Parameters per statement, well below PostgreSQL's 65,535.
    static let maxBinds = 30_000

    private(set) var parts: [String] = []
    private(set) var binds = PostgresBindings()
    private(set) var bindCount = 0

    var isEmpty: Bool { parts.isEmpty }

    /// Adds one part whose placeholders start after ``bindCount``; `bind` appends exactly `count` values.
    mutating func add(_ sql: String, count: Int, bind: (inout PostgresBindings) throws -> Void) rethrows {
        parts.append(sql)
        try bind(&binds)
        bindCount += count
    }

    /// The parts as one statement ending in `final` (a `SELECT`).
    func query(final: String) -> PostgresQuery {
        guard !parts.isEmpty else { return PostgresQuery(unsafeSQL: final, binds: binds) }
        let ctes = parts.enumerated().map { "w\($0.offset) AS (\($0.element))" }.joined(separator: ", ")
        return PostgresQuery(unsafeSQL: "WITH \(ctes) \(final)", binds: binds)
    }
}
