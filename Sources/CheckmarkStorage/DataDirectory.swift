import CheckmarkCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The folder holding the database, created when missing and held with an exclusive lock while a
/// server runs, so that two processes never write the same database.
package final class DataDirectory: Sendable {
    package let path: String
    /// The locked file's descriptor; -1 once released.
    private let lockDescriptor: Mutex<Int32>

    /// The lock file's name inside the directory.
    package static let lockFileName = "checkmark.lock"

    /// Creates the directory if needed, checks it is writable and takes its lock.
    /// - Throws: ``StorageError/directoryUnwritable(path:reason:)`` or
    ///   ``StorageError/lockedByAnotherProcess(path:)``.
    package init(path: String) throws(StorageError) {
        self.path = path
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .directoryUnwritable(path: path, reason: "cannot create it (\(error.localizedDescription))")
        }
        guard access(path, W_OK | X_OK) == 0 else {
            throw .directoryUnwritable(path: path, reason: String(cString: strerror(errno)))
        }
        let lockPath = path + "/" + Self.lockFileName
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw .directoryUnwritable(path: path, reason: "cannot open \(lockPath): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { throw .lockedByAnotherProcess(path: path) }
            throw .directoryUnwritable(path: path, reason: "cannot lock \(lockPath): \(String(cString: strerror(code)))")
        }
        lockDescriptor = Mutex(fd)
    }

    /// Gives up the lock (at shutdown, so another server may open the directory). Idempotent.
    package func release() {
        lockDescriptor.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    /// The database file's path.
    package var databasePath: String { path + "/" + Self.databaseFileName }
    /// The database's file name inside the directory.
    package static let databaseFileName = "checkmark.sqlite"

    deinit {
        release()
    }
}
