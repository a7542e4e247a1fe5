import CheckmarkStorage
import Foundation
import GRDB
import Testing

/// Issue: refuse with a clear message, not a crash, when the directory is unwritable, the database is
/// locked by another process, the schema is newer than the binary, or the file is corrupt.
@Suite("Storage start-up refusals")
struct StartupRefusalTests {
    @Test func unwritableDirectoryIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // A regular file where the directory's parent should be: nobody, root included, can create it.
        #expect(FileManager.default.createFile(atPath: directory.path, contents: Data("x".utf8)))
        #expect {
            _ = try DataDirectory(path: directory.path + "/data")
        } throws: { error in
            guard case StorageError.directoryUnwritable = error else { return false }
            return "\(error)".contains("not writable")
        }
    }

    @Test func secondHolderOfTheDirectoryIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let first = try DataDirectory(path: directory.path)
        #expect {
            _ = try DataDirectory(path: directory.path)
        } throws: { error in
            guard case StorageError.lockedByAnotherProcess = error else { return false }
            return "\(error)".contains("in use by another checkmark process")
        }
        withExtendedLifetime(first) {}
    }

    @Test func newerSchemaIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        do {
            let store = try SQLiteStore(directory: try DataDirectory(path: directory.path))
            store.close()
        }
        let queue = try DatabaseQueue(path: directory.path + "/checkmark.sqlite")
        try queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')") }
        try queue.close()
        #expect {
            _ = try SQLiteStore(directory: try DataDirectory(path: directory.path))
        } throws: { error in
            guard case StorageError.schemaNewer(_, let unknown) = error else { return false }
            return unknown == ["v99-from-the-future"] && "\(error)".contains("newer checkmark")
        }
    }

    /// Regression (issue 18): a zero-length database file started as an empty database without a word.
    @Test func zeroLengthDatabaseFileIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: directory.path + "/checkmark.sqlite", contents: Data()))
        #expect {
            _ = try SQLiteStore(directory: try DataDirectory(path: directory.path))
        } throws: { error in
            guard case StorageError.corrupt = error else { return false }
            return "\(error)".contains("empty (0 bytes)")
        }
    }

    @Test func corruptFileIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        #expect(FileManager.default.createFile(atPath: directory.path + "/checkmark.sqlite", contents: garbage))
        #expect {
            _ = try SQLiteStore(directory: try DataDirectory(path: directory.path))
        } throws: { error in
            guard case StorageError.corrupt = error else { return false }
            return "\(error)".contains("corrupt")
        }
    }
}
