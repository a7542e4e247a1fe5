import CheckmarkCore
import Foundation

/// One column's value of one row, as extracted from the model (writing) or read from a database
/// (loading). The case is the column's ``ColumnType`` (`text` or `textBytes` for a text column); nil
/// is SQL NULL.
enum ColumnValue: Sendable, Hashable {
    case text(String?)
    /// A text column's value given as the UTF-8 bytes the model holds (encoded JSON), written as they
    /// are, with no `String` made of them on the way. Only writing makes it; loading gives ``text(_:)``.
    case textBytes([UInt8])
    case integer(Int64?)
    case boolean(Bool?)
    case blob(Data?)

    /// The value of a text column. - Throws: ``StorageError/corrupt(path:reason:)`` for NULL or another type.
    var text: String { get throws(StorageError) { try required(optionalText) } }
    var integer: Int64 { get throws(StorageError) { try required(optionalInteger) } }
    var boolean: Bool { get throws(StorageError) { try required(optionalBoolean) } }
    var blob: Data { get throws(StorageError) { try required(optionalBlob) } }

    /// The value of a nullable column (nil for NULL). - Throws: when the value is of another type.
    var optionalText: String? {
        get throws(StorageError) {
            switch self {
            case .text(let text): return text
            case .textBytes(let bytes): return String(decoding: bytes, as: UTF8.self)
            case .integer, .boolean, .blob: throw mismatch("text")
            }
        }
    }
    var optionalInteger: Int64? { get throws(StorageError) { if case .integer(let v) = self { return v }; throw mismatch("integer") } }
    var optionalBoolean: Bool? { get throws(StorageError) { if case .boolean(let v) = self { return v }; throw mismatch("boolean") } }
    var optionalBlob: Data? { get throws(StorageError) { if case .blob(let v) = self { return v }; throw mismatch("blob") } }

    private func required<T>(_ value: T?) throws(StorageError) -> T {
        guard let value else { throw .corrupt(path: "", reason: "NULL in a column that may not hold NULL") }
        return value
    }

    private func mismatch(_ expected: String) -> StorageError {
        .corrupt(path: "", reason: "a \(expected) column holds \(self)")
    }
}
