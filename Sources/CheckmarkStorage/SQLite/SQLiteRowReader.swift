import CheckmarkCore
#if canImport(Glibc)
import Glibc
#endif
import GRDB
import GRDBSQLite

/// Reads a query's rows through SQLite's C interface, column by index, for the loads that read a
/// row per message or per pointer pass at start-up: no boxed values, no per-row arrays, and a cid
/// column parsed once per run of equal values instead of once per row.
///
/// Contract: used inside a read on the database's own queue; ``forEach(_:sql:_:)`` steps the
/// statement to its end (or the first error, which it throws as a `DatabaseError`).
struct SQLiteRowReader {
    private let handle: SQLiteStatement
    private var lastCID: (bytes: [UInt8], cid: ChannelCID)?

    private init(handle: SQLiteStatement) {
        self.handle = handle
    }

    /// Hands `body` a reader positioned on each row of `sql` in turn.
    static func forEach(_ db: Database, sql: String, arguments: StatementArguments = StatementArguments(),
                        _ body: (inout SQLiteRowReader) throws -> Void) throws {
        let statement = try db.makeStatement(sql: sql)
        try statement.setArguments(arguments)
        var reader = SQLiteRowReader(handle: statement.sqliteStatement)
        while true {
            let code = sqlite3_step(reader.handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: sql)
            }
            try body(&reader)
        }
    }

    /// Column `index` as an integer (0 for NULL).
    func integer(_ index: Int32) -> Int64 {
        sqlite3_column_int64(handle, index)
    }

    /// Column `index` as a flag stored as 0/1.
    func boolean(_ index: Int32) -> Bool {
        sqlite3_column_int64(handle, index) != 0
    }

    /// Column `index` as text; nil for NULL.
    func optionalText(_ index: Int32) -> String? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        return text(index)
    }

    /// Column `index` as text ("" for NULL).
    func text(_ index: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, index) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, index))), as: UTF8.self)
    }

    /// Column `index` as a channel cid, the previous row's (sharing its storage) when the text is
    /// the same.
    /// - Throws: ``StorageError/corrupt(path:reason:)`` for text that is not a cid.
    mutating func cid(_ index: Int32) throws(StorageError) -> ChannelCID {
        let start = sqlite3_column_text(handle, index)
        let bytes = UnsafeBufferPointer(start: start, count: Int(sqlite3_column_bytes(handle, index)))
        if let lastCID, lastCID.bytes.count == bytes.count, let start = bytes.baseAddress,
           lastCID.bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress!, start, bytes.count) == 0 }) {
            return lastCID.cid
        }
        let cid = try StateTables.cid(String(decoding: bytes, as: UTF8.self))
        lastCID = (Array(bytes), cid)
        return cid
    }
}
