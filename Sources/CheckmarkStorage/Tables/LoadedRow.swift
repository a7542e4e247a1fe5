import CheckmarkCore

/// The values of one loaded row, in the order of its ``TableDescription``'s columns, read by name.
struct LoadedRow {
    let names: [String]
    let values: [ColumnValue]

    /// The value of column `name`. - Throws: when the description has no such column (a bug).
    subscript(_ name: String) -> ColumnValue {
        get throws(StorageError) {
            guard let index = names.firstIndex(of: name) else { throw .corrupt(path: "", reason: "no column \(name)") }
            return values[index]
        }
    }
}
