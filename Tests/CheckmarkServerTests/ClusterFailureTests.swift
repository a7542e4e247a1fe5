import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import CheckmarkStorage
import CheckmarkWebSocket
import CheckmarkWire
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
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

        /// Waits up to `seconds` for `condition`.
        static func eventually(within seconds: Double, _ condition: () throws -> Bool) async throws -> Bool {
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            while ContinuousClock.now < deadline {
                if (try? condition()) == true { return true }
                try await Task.sleep(for: .milliseconds(50))
            }
            return try condition()
        }

        /// The database restarts under a node (its connections cut, new ones refused for a while): the
        /// node closes its clients (1011), refuses commands (503) and is not ready meanwhile, then
        /// reloads its state from the database, with what another node committed meanwhile, and goes
        /// on without a restart. It stopped for good, and ignored SIGTERM.
        @Test func aNodeWhoseDatabaseRestartsReloadsAndGoesOnWithoutARestart() async throws {
            let relay = try await Self.startRelay()
            let url = try Self.relayedURL(relay)
            let direct = url.replacingOccurrences(of: "127.0.0.1:\(relay.port)", with: {
                let base = try! #require(URLComponents(string: ProcessInfo.processInfo.environment["CHECKMARK_TEST_POSTGRES_URL"]!))
                return "\(base.host ?? "127.0.0.1"):\(base.port ?? 5432)"
            }())
            let node = try await TestServer.start { $0.postgresURL = url }
            let other = try await TestServer.start { $0.postgresURL = direct }
            try await node.setUp(users: ["alice", "bob", "carol"])
            let alice = try await node.connect("alice")
            _ = try await alice.watch(TestServer.general)
            let carol = try await other.connect("carol")
            _ = try await carol.watch(TestServer.general)

            relay.cut()
            let closed = await alice.nextEvent(ofType: [], timeout: .seconds(10))
            if case .closed(let code) = closed {
                #expect(code == .internalError, "1011: the client reconnects")
            } else {
                Issue.record("alice's connection was not closed: \(String(describing: closed))")
            }
            #expect(try node.http("GET", "/readyz").status == 503)
            await #expect(throws: ServiceError.self) {
                try await node.run(.sendMessage(cid: TestServer.general, userID: "alice", draft: MessageDraft(text: "lost?")))
            }
            // The other node goes on meanwhile: at once with the shards it owns; with the channel's
            // shard, which the cut-off node owned, once that node's lease ran out (refused as
            // retryable until then).
            let clock = ContinuousClock()
            let cutAt = clock.now
            var sent = false
            while !sent && clock.now - cutAt < .seconds(15) {
                do {
                    try await other.run(.sendMessage(cid: TestServer.general, userID: "bob", draft: MessageDraft(id: "meanwhile", text: "still here")))
                    sent = true
                } catch ServiceError.storage {
                    try await Task.sleep(for: .milliseconds(200))
                } catch {
                    Issue.record("the other node refused: \(error)")
                    break
                }
            }
            #expect(sent, "the other node took the channel's shard")

            relay.restore()
            #expect(try await Self.eventually(within: 10) { try node.http("GET", "/readyz").status == 200 }, "ready again")
            do {
                try await Self.afterTheRestart(node, other)
            } catch {
                Issue.record("after the restart: \(error)")
            }
            await node.stop()
            await other.stop()
            await relay.stop()
            Self.dropSchema(url)
        }

        /// The restarted node has reloaded, and goes on with the other.
        private static func afterTheRestart(_ node: TestServer, _ other: TestServer) async throws {
            let metrics = try node.http("GET", "/metrics").body
            #expect(metrics.contains("checkmark_storage_reloads_total 1"))
            // Alice's connection went with the reload: the other node no longer counts her.
            let bob = try await other.connect("bob")
            let seen = try await bob.watch(TestServer.general)
            #expect(seen["watcher_count"]?.intValue == 2, "bob and carol, not alice's closed connection")
            let again = try await node.connect("alice")
            let state = try await again.watch(TestServer.general)
            let ids = state["messages"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            #expect(ids.contains("meanwhile"), "the reloaded state has the other node's message")
            _ = try await again.sendMessage(TestServer.general, text: "back", id: "back")
            let atBob = await bob.nextEvent(ofType: ["message.new"])
            #expect(atBob?.json?["message"]?["id"]?.stringValue == "back")
        }

        /// One value of `sql`, run by `psql` on the test database.
        static func psql(_ sql: String) throws -> String {
            let psql = Process()
            let output = Pipe()
            psql.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            psql.arguments = ["psql", "-q", "-t", "-A", ProcessInfo.processInfo.environment["CHECKMARK_TEST_POSTGRES_URL"]!, "-c", sql]
            psql.standardOutput = output
            try psql.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            psql.waitUntilExit()
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// A node paused (SIGSTOP) in the middle of a commit, holding the journal's append lock, holds
        /// the other nodes up for `shard_lease` at most: PostgreSQL then ends its transaction. The other
        /// node's commit used to wait for the statement timeout (10 s) and fail; the paused node, once
        /// it runs again, reloads and goes on.
        @Test func aNodePausedInsideACommitHoldsTheOthersUpNoLongerThanItsLease() async throws {
            let base = ProcessInfo.processInfo.environment["CHECKMARK_TEST_POSTGRES_URL"]!
            let schema = "paused_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
            let url = base + (base.contains("?") ? "&" : "?") + "schema=" + schema
            defer { Self.dropSchema(url) }
            // Unused by a node on PostgreSQL, but `serve` names one.
            let directory = NSTemporaryDirectory() + "checkmark-paused-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let other = try await TestServer.start {
                $0.postgresURL = url
                $0.shardLeaseSeconds = 2
            }
            defer { Task { await other.stop() } }
            try await other.setUp(users: ["alice", "bob"])
            // Shard 247: the second node's once the first has handed it the upper half.
            let busy = ChannelCID(type: "messaging", id: "busy")
            try await other.run(.createChannel(cid: busy, createdBy: "alice", members: ["alice", "bob"]))
            let paused = try ServerProcess(dataDirectory: directory, extraArguments: ["--set", "postgres_url=" + url, "--set", "shard_lease=2"])
            #expect(try await Self.eventually(within: 10) {
                try httpRequest(port: paused.port, "GET", "/metrics").body.contains("checkmark_shards_owned 128")
            }, "the second node owns the upper half of the shards")
            let auth = ["Authorization": TestServer.serverToken, "stream-auth-type": "jwt"]
            let path = "/channels/messaging/busy/message?api_key=\(TestServer.apiKey)"
            // Load on the paused node, so that it is often inside a commit.
            let loading = NIOLockedValueBox(true)
            let port = paused.port
            let load = Task.detached {
                var index = 0
                while loading.withLockedValue({ $0 }) {
                    index += 1
                    _ = try? httpRequest(port: port, "POST", path, body: #"{"message":{"text":"load \#(index)","user_id":"alice"}}"#, headers: auth)
                }
            }
            // Paused until it is caught holding the lock, idle inside its transaction.
            let holding = """
                SELECT count(*) FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid
                WHERE l.locktype = 'advisory' AND l.granted AND a.state = 'idle in transaction'
                  AND a.application_name = 'checkmark \(schema)' AND now() - a.state_change > interval '150 ms'
                """
            var caught = false
            for _ in 0..<60 where !caught {
                paused.signal(SIGSTOP)
                try await Task.sleep(for: .milliseconds(300))
                caught = try Self.psql(holding) == "1"
                if !caught {
                    paused.signal(SIGCONT)
                    try await Task.sleep(for: .milliseconds(Int.random(in: 5...40)))
                }
            }
            loading.withLockedValue { $0 = false }
            try #require(caught, "the loaded node was never paused inside a commit")
            let clock = ContinuousClock()
            let started = clock.now
            var failure: (any Error)?
            do {
                try await other.run(.sendMessage(cid: TestServer.general, userID: "bob", draft: MessageDraft(text: "go on")))
            } catch {
                failure = error
            }
            let waited = clock.now - started
            #expect(failure == nil, "\(String(describing: failure))")
            #expect(waited < .seconds(5), "the other node waited \(waited)")
            paused.signal(SIGCONT)
            _ = await load.result
            #expect(try await Self.eventually(within: 15) {
                try httpRequest(port: port, "POST", path, body: #"{"message":{"text":"back","user_id":"alice"}}"#, headers: auth).status == 200
            }, "the paused node takes commands again")
            paused.signal(SIGTERM)
            _ = paused.waitForExit()
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
