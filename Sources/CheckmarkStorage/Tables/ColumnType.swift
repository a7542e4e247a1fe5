/// The logical type of a stored column. Each engine maps it to its own type: SQLite `TEXT`,
/// `INTEGER` (booleans as 0/1), `BLOB`; PostgreSQL `TEXT`, `BIGINT` (or `INTEGER` where the schema
/// says so), `BOOLEAN`, `BYTEA`.
enum ColumnType: Sendable, Hashable {
    case text
    case integer
    case boolean
    case blob
}
