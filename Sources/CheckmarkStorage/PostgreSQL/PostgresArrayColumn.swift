import NIOCore
import PostgresNIO

/// One column of many rows, bound as a single PostgreSQL array parameter (NULLs included) and
/// turned back into rows with `unnest($1, $2, …)`. A statement written this way has the same text
/// whatever the number of rows, so PostgreSQL parses and plans a small statement instead of one
/// with a placeholder per value, and no statement comes near the 65,535-parameter limit.
struct PostgresArrayColumn<Element: PostgresArrayElement>: PostgresNonThrowingEncodable {
    var values: [Element?]

    init<Rows: Sequence>(_ rows: Rows, _ value: (Rows.Element) throws -> Element?) rethrows {
        values = try rows.map(value)
    }

    static var psqlType: PostgresDataType { Element.arrayType }
    static var psqlFormat: PostgresFormat { .binary }

    /// PostgreSQL's binary array form: dimensions, has-NULLs flag, element type, then for one
    /// dimension its length and lower bound (1), then each element as length and bytes (-1: NULL).
    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeInteger(values.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(values.contains { $0 == nil } ? 1 : 0, as: Int32.self)
        buffer.writeInteger(Element.elementType.rawValue)
        guard !values.isEmpty else { return }
        buffer.writeInteger(Int32(values.count))
        buffer.writeInteger(1, as: Int32.self)
        for value in values {
            guard let value else {
                buffer.writeInteger(-1, as: Int32.self)
                continue
            }
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(0, as: Int32.self)
            value.writeBinary(to: &buffer)
            buffer.setInteger(Int32(buffer.writerIndex - lengthIndex - 4), at: lengthIndex)
        }
    }
}
