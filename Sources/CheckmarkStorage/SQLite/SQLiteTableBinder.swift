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
        /// `INSERT OR IGNORE`: new rows; a row whose primary key exists stays as it is.
        case insertMissing = "INSERT OR IGNORE"
    }

    /// The statement that writes one whole row with `verb`.
    func sql(_ verb: Verb) -> String {
        let tuple = "(" + Array(repeating: "?", count: table.columns.count).joined(separator: ", ") + ")"
        return "\(verb.rawValue) INTO \(table.name) (\(table.columnList)) VALUES " + tuple
    }

    /// Writes `rows` with `verb`, in order, one row per step of a statement prepared once per
    /// connection. A later row with the key of an earlier one replaces it (upsert) or fails (insert).
    ///
    /// One row per statement, not a multi-row `VALUES` list: SQLite gives a statement that writes
    /// several rows and may fail part-way (a key conflict) a statement journal, a copy of every page
    /// it changes in a temporary file, written so that it can undo that statement alone. With 32 rows
    /// per statement, those copies were 8,000 of the writer's 11,000 `pwrite` calls a second
    /// (`bench-storage --clients 10000`; BENCHMARKS.md).
    func write(_ rows: some Collection<Row>, _ verb: Verb, in db: Database) throws {
        guard !rows.isEmpty else { return }
        let values = table.columns.map(\.value)
        let statement = try SQLiteBoundStatement(db, sql: sql(verb))
        for row in rows {
            try statement.execute(parameters: values.count) { values[$0](row) }
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
            try statement!.execute(parameters: bound.count) { bound[$0](row) }
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
        try prefix(db, clauses, arguments: arguments) { row in
            try body(row)
            return true
        }
    }

    /// As ``forEach(_:_:arguments:_:)``, until `body` returns false: the rows after it are not read.
    func prefix(_ db: Database, _ clauses: String? = nil, arguments: StatementArguments = StatementArguments(),
                while body: (Row) throws -> Bool) throws {
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
            guard try body(try table.decode(LoadedRow(names: names, values: values))) else { return }
        }
    }
}
