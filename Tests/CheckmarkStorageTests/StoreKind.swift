import CheckmarkStorage
import Foundation
import Logging

/// The stores the conformance tests run against: SQLite always, PostgreSQL when
/// `CHECKMARK_TEST_POSTGRES_URL` names a server (`.ci/run` starts one with deploy/cluster/postgres.sh).
/// Each PostgreSQL test gets a schema of its own, so runs never see each other's rows.
enum StoreKind: String, CustomStringConvertible, CaseIterable, Sendable {
    case sqlite
    case postgres

    static let postgresURL = ProcessInfo.processInfo.environment["CHECKMARK_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

    /// The kinds this run can test.
    static var available: [StoreKind] { postgresURL == nil ? [.sqlite] : [.sqlite, .postgres] }

    var description: String { rawValue }

    /// A new, empty place to store in; ``TestStoreLocation/open()`` opens it as often as a test needs.
    func makeLocation() throws -> TestStoreLocation {
        switch self {
        case .sqlite:
            return .sqlite(TemporaryDirectory())
        case .postgres:
            let schema = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
            let separator = StoreKind.postgresURL!.contains("?") ? "&" : "?"
            return .postgres(try PostgresLocation(url: StoreKind.postgresURL! + separator + "schema=" + schema))
        }
    }
}

enum TestStoreLocation {
    case sqlite(TemporaryDirectory)
    case postgres(PostgresLocation)

    func open() throws -> any ReceiptsStore {
        switch self {
        case .sqlite(let directory): try SQLiteStore(directory: try DataDirectory(path: directory.path))
        case .postgres(let location): try PostgresStore(location: location, logger: Logger(label: "test"))
        }
    }

    /// Deletes what the test stored: the directory, or the schema with its tables.
    func remove() {
        switch self {
        case .sqlite(let directory): directory.remove()
        case .postgres(let location): try? PostgresStore.dropSchema(of: location, logger: Logger(label: "test"))
        }
    }
}
