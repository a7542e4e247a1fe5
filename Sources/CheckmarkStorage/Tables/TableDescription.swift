import CheckmarkCore

/// One table as storage writes and loads it: its name, its columns in order (each with a logical
/// type and the model value it holds), its primary key, and how a loaded row becomes a `Row` again.
/// The engines' binders (``SQLiteTableBinder``, ``PostgresTableBinder``) make every INSERT, upsert and
/// load SELECT from it, so a table's columns are spelled here only (and in its frozen migrations).
///
/// Contract: `columns` match the table's columns after the latest migration (names, types, NULL, key;
/// a test checks both engines), and `decode(values(row)) == row` for every stored field.
struct TableDescription<Row>: Sendable {
    let name: String
    let columns: [TableColumn<Row>]
    let primaryKey: [String]
    /// Builds a row from loaded values, given in the order of `columns`.
    let decode: @Sendable (LoadedRow) throws(StorageError) -> Row

    /// The column names separated by commas, in order.
    var columnList: String { columns.map(\.name).joined(separator: ", ") }

    /// The columns not in the primary key (what an upsert replaces).
    var valueColumns: [TableColumn<Row>] { columns.filter { !primaryKey.contains($0.name) } }

    /// The values of `row`, in column order.
    func values(_ row: Row) -> [ColumnValue] { columns.map { $0.value(row) } }

    /// `SELECT <every column> FROM <table>`, followed by `clauses` (`WHERE …`, `ORDER BY …`) when given.
    func select(_ clauses: String? = nil) -> String {
        "SELECT \(columnList) FROM \(name)" + (clauses.map { " " + $0 } ?? "")
    }
}
