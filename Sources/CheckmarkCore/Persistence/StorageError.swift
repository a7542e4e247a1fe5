/// Why storage could not open or write. Each case's description is the message an operator sees at
/// start-up (`checkmark serve` prints it and exits non-zero) or in the log.
package enum StorageError: Error, Sendable, CustomStringConvertible {
    /// The data directory cannot be created or written.
    case directoryUnwritable(path: String, reason: String)
    /// Another process holds the data directory.
    case lockedByAnotherProcess(path: String)
    /// The database was written by a newer Checkmark; this binary does not know its schema.
    case schemaNewer(path: String, unknownMigrations: [String])
    /// The file is not a database, or its pages are damaged.
    case corrupt(path: String, reason: String)
    /// The database could not be opened or read for another reason.
    case unavailable(reason: String)
    /// A commit failed: nothing of its batch is acknowledged, and the server stops.
    case commitFailed(reason: String)
    /// Storage was closed (shutting down) or failed before.
    case closed
    /// A cluster node's commit was refused because it no longer owns these shards at the epochs it
    /// held them at (another node took them): nothing of the batch was written.
    case fenced(shards: [ShardID])

    package var description: String {
        switch self {
        case .directoryUnwritable(let path, let reason):
            "data directory \(path) is not writable: \(reason)"
        case .lockedByAnotherProcess(let path):
            "data directory \(path) is in use by another checkmark process (lock held on \(path)/checkmark.lock)"
        case .schemaNewer(let path, let unknown):
            "database \(path) was written by a newer checkmark (unknown migrations: \(unknown.joined(separator: ", "))); run a newer binary or restore a backup"
        case .corrupt(let path, let reason):
            "database \(path) is corrupt or not a checkmark database: \(reason)"
        case .unavailable(let reason):
            "storage unavailable: \(reason)"
        case .commitFailed(let reason):
            "commit failed: \(reason)"
        case .closed:
            "storage is closed"
        case .fenced(let shards):
            "commit refused: this node no longer owns \(shards.count == 1 ? "shard" : "shards") \(shards.map { String($0.rawValue) }.joined(separator: ", "))"
        }
    }
}
