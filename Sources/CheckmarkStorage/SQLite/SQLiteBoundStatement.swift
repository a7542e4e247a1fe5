import Foundation
import GRDB
import GRDBSQLite

/// One of the write path's prepared statements (from GRDB's statement cache, so it is prepared once
/// per connection and reused by every batch), bound and stepped through SQLite's C interface: each
/// ``ColumnValue`` goes straight into its parameter, with no argument arrays or boxed values in
/// between. Text and blobs are copied by SQLite when bound (`SQLITE_TRANSIENT`).
///
/// Contract: used only inside a write transaction on the database's own queue, for statements that
/// return no rows (INSERT, UPDATE). ``execute()`` steps the statement to completion and leaves it
/// reset with its bindings cleared, so the cached statement is clean for its next user; a failed
/// step throws a `DatabaseError` with SQLite's code and message (the transaction is then rolled
/// back by whoever opened it).
struct SQLiteBoundStatement {
    private let statement: Statement
    private let handle: SQLiteStatement

    init(_ db: Database, sql: String) throws {
        statement = try db.cachedStatement(sql: sql)
        handle = statement.sqliteStatement
    }

    /// SQLite copies the bytes before the bind call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    /// Binds `value` to parameter `index` (1-based). NULL for nil; booleans as 0/1, as the schema
    /// stores them; an empty text or blob stays an empty value (never NULL).
    func bind(_ value: ColumnValue, at index: Int32) throws {
        let code: Int32
        switch value {
        case .text(let text?):
            var text = text
            code = text.withUTF8 { bindText($0, at: index) }
        case .textBytes(let bytes):
            code = bytes.withUnsafeBufferPointer { bindText($0, at: index) }
        case .integer(let integer?):
            code = sqlite3_bind_int64(handle, index, integer)
        case .boolean(let flag?):
            code = sqlite3_bind_int64(handle, index, flag ? 1 : 0)
        case .blob(let data?):
            code = data.isEmpty
                ? sqlite3_bind_zeroblob(handle, index, 0)
                : data.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), Self.transient) }
        case .text(nil), .integer(nil), .boolean(nil), .blob(nil):
            code = sqlite3_bind_null(handle, index)
        }
        guard code == SQLITE_OK else { throw failure(code) }
    }

    /// Binds UTF-8 `bytes` as text; empty bytes as an empty text, never NULL.
    private func bindText(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int32) -> Int32 {
        // An empty string or array may have no storage, and a nil pointer would bind NULL.
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, Self.transient) }
        return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            sqlite3_bind_text(handle, index, $0, Int32(bytes.count), Self.transient)
        }
    }

    /// Runs the statement with the values bound, then resets it and clears its bindings.
    func execute() throws {
        let code = sqlite3_step(handle)
        let error = code == SQLITE_DONE ? nil : failure(code)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        if let error { throw error }
    }

    private func failure(_ code: Int32) -> DatabaseError {
        let message = sqlite3_db_handle(handle).flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
    }
}
