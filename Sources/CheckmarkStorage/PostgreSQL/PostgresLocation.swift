import CheckmarkCore
import Foundation

/// Where a PostgreSQL database is: parsed from `postgres://user:password@host:port/database`
/// (`postgresql://` too; port 5432 and database = user by default), optionally with `?schema=NAME`
/// to keep one deployment's tables (and its notifications and locks) in a schema of their own. TLS is not used: run nodes and
/// database on one private network, or reach the database through a TLS tunnel.
package struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: Int
    package var username: String
    package var password: String?
    package var database: String
    /// The schema the tables live in (created if missing); nil for the role's default (`public`).
    package var schema: String?

    /// - Throws: ``StorageError/unavailable(reason:)`` naming what is wrong with `url`.
    package init(url: String) throws(StorageError) {
        guard let components = URLComponents(string: url), let scheme = components.scheme,
              scheme == "postgres" || scheme == "postgresql" else {
            throw .unavailable(reason: "postgres url must look like postgres://user:password@host:5432/database, not \(Self.redacted(url))")
        }
        guard let host = components.host, !host.isEmpty else { throw .unavailable(reason: "postgres url has no host") }
        guard let user = components.user, !user.isEmpty else { throw .unavailable(reason: "postgres url has no user name") }
        self.host = host
        port = components.port ?? 5432
        username = user.removingPercentEncoding ?? user
        password = components.password.map { $0.removingPercentEncoding ?? $0 }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? username : path
        schema = components.queryItems?.first { $0.name == "schema" }?.value
        if let schema {
            guard (1...48).contains(schema.utf8.count),
                  schema.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }) else {
                throw .unavailable(reason: "postgres schema must be 1 to 48 of a-z, 0-9 and _, not \(schema)")
            }
        }
    }

    /// The location without its password, for logs and errors.
    package var description: String {
        "postgres://\(username)@\(host):\(port)/\(database)" + (schema.map { "?schema=" + $0 } ?? "")
    }

    private static func redacted(_ url: String) -> String {
        guard let at = url.lastIndex(of: "@"), let colon = url[..<at].lastIndex(of: ":"), url[..<colon].contains("//") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }
}
