import Foundation
import GRDB
import GRDBSQLite

/// One of the write path's prepared statements (from GRDB's statement cache, so it is prepared once
/// per connection and reused by every batch), bound and stepped through SQLite's C interface: each
/// ``ColumnValue`` goes straight into its parameter, with no argument arrays or boxed values in
/// between, and text and blobs read in place by SQLite rather than copied.
///
/// Contract: used only inside a write transaction on the database's own queue, for statements that
/// return no rows (INSERT, UPDATE). ``execute(parameters:_:)`` steps the statement to completion and leaves it
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

    /// Binds parameters 1 through `count` to `value(0)` through `value(count - 1)` and runs the
    /// statement to completion. NULL for nil; booleans as 0/1, as the schema stores them; an
    /// empty text or blob stays an empty value (never NULL). Text and blobs are bound in place, not
    /// copied (`SQLITE_STATIC`): each is bound inside the scope of its bytes, and the statement is
    /// stepped, reset and cleared inside all of them. A failed bind throws with the statement reset
    /// and its bindings cleared.
    func execute(parameters count: Int, _ value: (Int) -> ColumnValue) throws {
        do {
            try bind(from: 0, count, value)
        } catch {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
            throw error
        }
    }

    /// Binds parameter `offset + 1`, then the rest inside its bytes' scope, then steps: the recursion
    /// keeps every buffer SQLite was given alive until the statement has run.
    private func bind(from offset: Int, _ count: Int, _ value: (Int) -> ColumnValue) throws {
        guard offset < count else { return try execute() }
        let index = Int32(offset + 1)
        func rest() throws { try bind(from: offset + 1, count, value) }
        switch value(offset) {
        case .text(let text?):
            var text = text
            try text.withUTF8 { bytes in
                try check(bindText(bytes, at: index))
                try rest()
            }
        case .textBytes(let bytes):
            try bytes.withUnsafeBufferPointer { bytes in
                try check(bindText(bytes, at: index))
                try rest()
            }
        case .blob(let data?):
            try data.withUnsafeBytes { bytes in
                try check(bytes.isEmpty
                    ? sqlite3_bind_zeroblob(handle, index, 0)
                    : sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), nil))
                try rest()
            }
        case .integer(let integer?):
            try check(sqlite3_bind_int64(handle, index, integer))
            try rest()
        case .boolean(let flag?):
            try check(sqlite3_bind_int64(handle, index, flag ? 1 : 0))
            try rest()
        case .text(nil), .integer(nil), .boolean(nil), .blob(nil):
            try check(sqlite3_bind_null(handle, index))
            try rest()
        }
    }

    /// Binds UTF-8 `bytes` as text, in place; empty bytes as an empty text, never NULL.
    private func bindText(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int32) -> Int32 {
        // An empty string or array may have no storage, and a nil pointer would bind NULL. The empty
        // text is copied (SQLITE_TRANSIENT): the literal's pointer is only sure to live for the call.
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, Self.transient) }
        return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            sqlite3_bind_text(handle, index, $0, Int32(bytes.count), nil)
        }
    }

    /// SQLite copies the bytes before the bind call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private func check(_ code: Int32) throws {
        guard code == SQLITE_OK else { throw failure(code) }
    }

    /// Runs the statement with the values bound, then resets it and clears its bindings.
    private func execute() throws {
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
