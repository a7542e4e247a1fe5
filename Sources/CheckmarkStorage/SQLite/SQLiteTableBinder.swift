import Foundation
import GRDB

/// Writes and loads the rows of one ``TableDescription`` in SQLite: statements made from the
/// description, values bound in its column order (booleans as 0/1, as the schema stores them) straight
/// into the prepared statements (``SQLiteBoundStatement``).
struct SQLiteTableBinder<Row> {
    let table: TableDescription<Row>

    init(_ table: TableDescription<Row>) { self.table = table }

    /// How ``write(_:_:in:)`` stores whole rows.
    enum Verb: String {
        /// `INSERT`: the rows must be new (a row with the same key is an error).
        case insert = "INSERT"
        /// `INSERT OR REPLACE`: new rows, or rows replaced by primary key.
        case upsert = "INSERT OR REPLACE"
    }

    /// Rows per statement in ``write(_:_:in:)``: one multi-row `VALUES` list steps once for them all.
    /// (The widest table, `members`, makes 13 × 32 = 416 parameters: far below SQLite's limit.)
    static var rowsPerStatement: Int { 32 }

    /// The statement that writes `rows` whole rows with `verb`.
    func sql(_ verb: Verb, rows: Int) -> String {
        let tuple = "(" + Array(repeating: "?", count: table.columns.count).joined(separator: ", ") + ")"
        return "\(verb.rawValue) INTO \(table.name) (\(table.columnList)) VALUES " + Array(repeating: tuple, count: rows).joined(separator: ", ")
    }

    /// Writes `rows` with `verb`, in order, up to ``rowsPerStatement`` rows per statement (statements
    /// prepared once per connection and row count, then reused). A later row with the key of an
    /// earlier one replaces it (upsert) or fails (insert), as row-by-row statements would.
    func write(_ rows: some Collection<Row>, _ verb: Verb, in db: Database) throws {
        let values = table.columns.map(\.value)
        var remaining = rows.count
        var iterator = rows.makeIterator()
        var full: SQLiteBoundStatement?
        while remaining > 0 {
            let count = min(Self.rowsPerStatement, remaining)
            let statement: SQLiteBoundStatement
            if count == Self.rowsPerStatement {
                if full == nil { full = try SQLiteBoundStatement(db, sql: sql(verb, rows: count)) }
                statement = full!
            } else {
                statement = try SQLiteBoundStatement(db, sql: sql(verb, rows: count))
            }
            var index: Int32 = 1
            for _ in 0..<count {
                guard let row = iterator.next() else { preconditionFailure("a collection with fewer rows than its count") }
                for value in values {
                    try statement.bind(value(row), at: index)
                    index += 1
                }
            }
            try statement.execute()
            remaining -= count
        }
    }

    /// Sets `columns` (key columns included, to find the row) of existing rows, by primary key.
    func update(_ rows: some Sequence<Row>, columns: [TableColumn<Row>], in db: Database) throws {
        let keys = columns.filter { table.primaryKey.contains($0.name) }
        let values = columns.filter { !table.primaryKey.contains($0.name) }
        let bound = (values + keys).map(\.value)
        var statement: SQLiteBoundStatement?
        for row in rows {
            if statement == nil {
                statement = try SQLiteBoundStatement(db, sql: """
                    UPDATE \(table.name) SET \(values.map { "\($0.name) = ?" }.joined(separator: ", ")) \
                    WHERE \(keys.map { "\($0.name) = ?" }.joined(separator: " AND "))
                    """)
            }
            for (offset, value) in bound.enumerated() { try statement!.bind(value(row), at: Int32(offset + 1)) }
            try statement!.execute()
        }
    }

    /// The table's rows that `clauses` (`WHERE …`, `ORDER BY …`, with `arguments`) select; all when nil.
    func load(_ db: Database, _ clauses: String? = nil, arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        var rows: [Row] = []
        try forEach(db, clauses, arguments: arguments) { rows.append($0) }
        return rows
    }

    /// Hands `body` the rows ``load(_:_:arguments:)`` would return, one at a time, without holding them all.
    func forEach(_ db: Database, _ clauses: String? = nil, arguments: StatementArguments = StatementArguments(),
                 _ body: (Row) throws -> Void) throws {
        let names = table.columns.map(\.name)
        let types = table.columns.map(\.type)
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
            try body(try table.decode(LoadedRow(names: names, values: values)))
        }
    }
}
