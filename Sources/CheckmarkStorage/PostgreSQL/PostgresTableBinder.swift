import Foundation
import PostgresNIO

/// Writes and loads the rows of one ``TableDescription`` in PostgreSQL: statements made from the
/// description, each column of many rows bound as one array parameter (``PostgresArrayColumn``) and
/// read back with `unnest`, so a statement's text never depends on the number of rows.
struct PostgresTableBinder<Row> {
    let table: TableDescription<Row>

    init(_ table: TableDescription<Row>) { self.table = table }

    /// Adds to `combined` an INSERT of `rows`; with `upsert`, a row whose primary key exists has
    /// its other columns replaced (`ON CONFLICT … DO UPDATE`), else it is an error.
    func insert(_ rows: [Row], upsert: Bool, into combined: inout PostgresCombinedWrite) {
        guard !rows.isEmpty else { return }
        var conflict = ""
        if upsert {
            let set = table.valueColumns.map { "\($0.name) = EXCLUDED.\($0.name)" }.joined(separator: ", ")
            conflict = " ON CONFLICT (\(table.primaryKey.joined(separator: ", "))) DO UPDATE SET \(set)"
        }
        combined.add(columns: table.columns.count, { "INSERT INTO \(table.name) (\(table.columnList)) SELECT * FROM \($0)\(conflict)" }) { b in
            Self.bind(table.columns, rows, &b)
        }
    }

    /// Adds to `combined` an INSERT of the `rows` whose primary key is not stored yet (`ON CONFLICT
    /// DO NOTHING`): a stored row stays as it is.
    func insertMissing(_ rows: [Row], into combined: inout PostgresCombinedWrite) {
        guard !rows.isEmpty else { return }
        let conflict = " ON CONFLICT (\(table.primaryKey.joined(separator: ", "))) DO NOTHING"
        combined.add(columns: table.columns.count, { "INSERT INTO \(table.name) (\(table.columnList)) SELECT * FROM \($0)\(conflict)" }) { b in
            Self.bind(table.columns, rows, &b)
        }
    }

    /// Adds to `combined` an UPDATE of `columns` (key columns included, to find the rows) of existing rows.
    func update(_ rows: [Row], columns: [TableColumn<Row>], into combined: inout PostgresCombinedWrite) {
        guard !rows.isEmpty else { return }
        let keys = columns.filter { table.primaryKey.contains($0.name) }
        let set = columns.filter { !table.primaryKey.contains($0.name) }.map { "\($0.name) = v.\($0.name)" }.joined(separator: ", ")
        let match = keys.map { "t.\($0.name) = v.\($0.name)" }.joined(separator: " AND ")
        let names = columns.map(\.name).joined(separator: ", ")
        combined.add(columns: columns.count, { "UPDATE \(table.name) AS t SET \(set) FROM \($0) AS v (\(names)) WHERE \(match)" }) { b in
            Self.bind(columns, rows, &b)
        }
    }

    /// Decodes loaded rows (from ``TableDescription/select(_:)``).
    func decode(_ rows: [PostgresRow]) throws -> [Row] {
        let names = table.columns.map(\.name)
        let types = table.columns.map(\.type)
        return try rows.map { row in
            var values: [ColumnValue] = []
            values.reserveCapacity(types.count)
            for (cell, type) in zip(row, types) {
                let value: ColumnValue = switch type {
                case .text: .text(try cell.decode(String?.self))
                case .integer: .integer(try cell.decode(Int64?.self))
                case .boolean: .boolean(try cell.decode(Bool?.self))
                case .blob: .blob(try cell.decode(Data?.self))
                }
                values.append(value)
            }
            return try table.decode(LoadedRow(names: names, values: values))
        }
    }

    /// Binds each of `columns` as one array of its type.
    private static func bind(_ columns: [TableColumn<Row>], _ rows: [Row], _ b: inout PostgresBindings) {
        for column in columns {
            switch column.type {
            case .text: b.append(PostgresArrayColumn(rows) { try? column.value($0).optionalText })
            case .integer: b.append(PostgresArrayColumn(rows) { try? column.value($0).optionalInteger })
            case .boolean: b.append(PostgresArrayColumn(rows) { try? column.value($0).optionalBoolean })
            case .blob: b.append(PostgresArrayColumn(rows) { try? column.value($0).optionalBlob })
            }
        }
    }
}
