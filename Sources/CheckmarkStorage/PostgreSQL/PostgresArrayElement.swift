import Foundation
import NIOCore
import PostgresNIO

/// A value that can be an element of a ``PostgresArrayColumn``: its PostgreSQL element and array
/// types and its binary form (as in PostgreSQL's `*send` functions).
protocol PostgresArrayElement {
    static var elementType: PostgresDataType { get }
    static var arrayType: PostgresDataType { get }
    func writeBinary(to buffer: inout ByteBuffer)
}

extension String: PostgresArrayElement {
    static var elementType: PostgresDataType { .text }
    static var arrayType: PostgresDataType { .textArray }
    func writeBinary(to buffer: inout ByteBuffer) { buffer.writeString(self) }
}

extension Int64: PostgresArrayElement {
    static var elementType: PostgresDataType { .int8 }
    static var arrayType: PostgresDataType { .int8Array }
    func writeBinary(to buffer: inout ByteBuffer) { buffer.writeInteger(self) }
}

extension Bool: PostgresArrayElement {
    static var elementType: PostgresDataType { .bool }
    static var arrayType: PostgresDataType { .boolArray }
    func writeBinary(to buffer: inout ByteBuffer) { buffer.writeInteger(self ? 1 : 0, as: UInt8.self) }
}

extension Data: PostgresArrayElement {
    static var elementType: PostgresDataType { .bytea }
    static var arrayType: PostgresDataType { .byteaArray }
    func writeBinary(to buffer: inout ByteBuffer) { buffer.writeBytes(self) }
}
