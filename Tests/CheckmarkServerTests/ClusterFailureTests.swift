import CheckmarkCore
import CheckmarkServer
import CheckmarkStorage
import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing

extension EndToEnd {
    /// Issue 45: a node's database stops answering or restarts under it. The node's database
    /// connections go through a ``TCPRelay`` that plays the fault. Runs when
    /// `CHECKMARK_TEST_POSTGRES_URL` names a server; each test uses a schema of its own.
    @Suite("Cluster: a node whose database fails", .serialized,
           .enabled(if: ProcessInfo.processInfo.environment["CHECKMARK_TEST_POSTGRES_URL"]?.isEmpty == false))
    struct ClusterFailureTests {
        /// The test database's URL through `relay`, on a fresh schema.
        static func relayedURL(_ relay: TCPRelay) throws -> String {
            let base = ProcessInfo.processInfo.environment["CHECKMARK_TEST_POSTGRES_URL"]!
            var components = try #require(URLComponents(string: base))
            components.host = "127.0.0.1"
            components.port = relay.port
            let schema = "failure_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
            components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "schema", value: String(schema))]
            return try #require(components.string)
        }

        static func startRelay() async throws -> TCPRelay {
            let base = ProcessInfo.processInfo.environment["CHECKMARK_TEST_POSTGRES_URL"]!
            let components = try #require(URLComponents(string: base))
            return try await TCPRelay.start(to: components.host ?? "127.0.0.1", port: components.port ?? 5432)
        }

        static func dropSchema(_ url: String) {
            guard let location = try? PostgresLocation(url: url) else { return }
            try? PostgresStore.dropSchema(of: location, logger: Logger(label: "test"))
        }

        /// SIGTERM while the database is silent, with a commit waiting for it: the stop ends within
        /// `shutdown_timeout` (it waited for the statement timeout, 10 s, and after a failed cycle
        /// for ever).
        @Test func aStopEndsWithinTheShutdownTimeoutWhileTheDatabaseIsSilent() async throws {
            let relay = try await Self.startRelay()
            let url = try Self.relayedURL(relay)
            let node = try await TestServer.start {
                $0.postgresURL = url
                $0.shutdownTimeoutSeconds = 2
            }
            try await node.setUp(users: ["alice"])
            relay.silence()
            let send = Task {
                try await node.run(.sendMessage(cid: TestServer.general, userID: "alice", draft: MessageDraft(text: "into the silence")))
            }
            try await Task.sleep(for: .milliseconds(300))
            let clock = ContinuousClock()
            let started = clock.now
            let stopped = NIOLockedValueBox(false)
            Task {
                await node.stop()
                stopped.withLockedValue { $0 = true }
            }
            // Waited for here at most 5 s, so that a stop that hangs fails the test instead of hanging it.
            while !stopped.withLockedValue({ $0 }) && clock.now - started < .seconds(5) {
                try await Task.sleep(for: .milliseconds(20))
            }
            let took = clock.now - started
            #expect(stopped.withLockedValue { $0 } && took < .seconds(3), "the stop took \(took)")
            relay.speak()
            _ = await send.result
            await relay.stop()
            Self.dropSchema(url)
        }
    }
}
