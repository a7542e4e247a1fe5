import Foundation
import GRDB

/// Writes and loads the rows of one ``TableDescription`` in SQLite: statements made from the
/// description, values bound in its column order (booleans as 0/1, as the schema stores them).
struct SQLiteTableBinder<Row> {
    let table: TableDescription<Row>

    init(_ table: TableDescription<Row>) { self.table = table }

    /// `INSERT OR REPLACE` of whole rows (new rows, or rows replaced by primary key).
    var upsertSQL: String {
        let placeholders = Array(repeating: "?", count: table.columns.count).joined(separator: ", ")
        return "INSERT OR REPLACE INTO \(table.name) (\(table.columnList)) VALUES (\(placeholders))"
    }

    /// `INSERT` of whole rows that must be new (a row with the same key is an error).
    var insertSQL: String {
        let placeholders = Array(repeating: "?", count: table.columns.count).joined(separator: ", ")
        return "INSERT INTO \(table.name) (\(table.columnList)) VALUES (\(placeholders))"
    }

    /// Writes `rows` with `sql` (``upsertSQL`` or ``insertSQL``), one cached statement for all.
    func write(_ rows: some Sequence<Row>, _ sql: String, in db: Database) throws {
        let statement = try db.cachedStatement(sql: sql)
        for row in rows { try statement.execute(arguments: Self.arguments(table.columns.map { $0.value(row) })) }
    }

    /// Sets `columns` (key columns included, to find the row) of existing rows, by primary key.
    func update(_ rows: some Sequence<Row>, columns: [TableColumn<Row>], in db: Database) throws {
        let keys = columns.filter { table.primaryKey.contains($0.name) }
        let values = columns.filter { !table.primaryKey.contains($0.name) }
        let statement = try db.cachedStatement(sql: """
            UPDATE \(table.name) SET \(values.map { "\($0.name) = ?" }.joined(separator: ", ")) \
            WHERE \(keys.map { "\($0.name) = ?" }.joined(separator: " AND "))
            """)
        for row in rows { try statement.execute(arguments: Self.arguments((values + keys).map { $0.value(row) })) }
    }

    /// The table's rows that `clauses` (`WHERE …`, `ORDER BY …`, with `arguments`) select; all when nil.
    func load(_ db: Database, _ clauses: String? = nil, arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        let names = table.columns.map(\.name)
        let types = table.columns.map(\.type)
        var rows: [Row] = []
        let cursor = try GRDB.Row.fetchCursor(db, sql: table.select(clauses), arguments: arguments)
        while let row = try cursor.next() {
            var values: [ColumnValue] = []
            values.reserveCapacity(types.count)
            for (index, type) in types.enumerated() {
                let stored: DatabaseValue = row[index]
                let value: ColumnValue = switch type {
                case .text: .text(String.fromDatabaseValue(stored))
                case .integer: .integer(Int64.fromDatabaseValue(stored))
                case .boolean: .boolean(Bool.fromDatabaseValue(stored))
                case .blob: .blob(Data.fromDatabaseValue(stored))
                }
                values.append(value)
            }
            rows.append(try table.decode(LoadedRow(names: names, values: values)))
        }
        return rows
    }

    private static func arguments(_ values: [ColumnValue]) -> StatementArguments {
        StatementArguments(values.map { value -> (any DatabaseValueConvertible)? in
            switch value {
            case .text(let text): text
            case .integer(let integer): integer
            case .boolean(let flag): flag
            case .blob(let data): data
            }
        })
    }
}
