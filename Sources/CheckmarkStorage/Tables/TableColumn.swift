/// One column of a table: its name, logical type, whether it may hold NULL, and how its value is
/// extracted from a row of the model (`Row`). Described once, in ``StateTables``; statements and
/// bindings of both engines are made from it.
struct TableColumn<Row>: Sendable {
    let name: String
    let type: ColumnType
    let nullable: Bool
    let value: @Sendable (Row) -> ColumnValue

    init(_ name: String, _ type: ColumnType, nullable: Bool = false, _ value: @escaping @Sendable (Row) -> ColumnValue) {
        self.name = name
        self.type = type
        self.nullable = nullable
        self.value = value
    }
}
