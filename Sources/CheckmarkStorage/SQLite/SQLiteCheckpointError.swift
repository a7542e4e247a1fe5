/// A background checkpoint that failed: the step (opening its connection, setting it up, the
/// checkpoint itself) and SQLite's message. Logged, never thrown to a caller.
struct SQLiteCheckpointError: Error, CustomStringConvertible {
    let step: String
    let message: String

    var description: String { "\(step): \(message)" }
}
