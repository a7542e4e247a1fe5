import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import CheckmarkTestSupport
import CheckmarkWebSocket
import Foundation
import NIOCore
import Testing

extension EndToEnd {
    /// `/healthz`, `/readyz`, `/metrics`, graceful shutdown and restart of the in-process server.
    @Suite("Operations", .serialized)
    struct OperationsTests {
        static let general = TestServer.general

        /// Prometheus text exposition: every line is a comment, blank, or `name{labels} value`.
        static func parsePrometheus(_ text: String) -> [String: Double]? {
            var samples: [String: Double] = [:]
            for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
                if line.hasPrefix("#") {
                    let parts = line.split(separator: " ")
                    guard parts.count >= 3, parts[1] == "TYPE" || parts[1] == "HELP" else { return nil }
                    continue
                }
                guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { return nil }
                let name = String(line[..<space])
                let metric = name.prefix { $0 != "{" }
                guard !metric.isEmpty, metric.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" }) else { return nil }
                if name.contains("{") { guard name.hasSuffix("}") else { return nil } }
                samples[name] = value
            }
            return samples
        }

        @Test func healthAndReadinessAnswer() async throws {
            let server = try await TestServer.start()
            #expect(try server.http("GET", "/healthz").status == 200)
            #expect(try server.http("GET", "/readyz").status == 200)
            await server.stop()
        }

        @Test func metricsParseAsPrometheusTextAndMoveWithTraffic() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob"], privacy: ["bob": PrivacySettings(readReceipts: false)])
            let before = try #require(Self.parsePrometheus(try server.http("GET", "/metrics").body))
            let alice = try await server.connect("alice")
            let bob = try await server.connect("bob")
            try await alice.watch(Self.general)
            try await bob.watch(Self.general)
            try await alice.sendMessage(Self.general, text: "hi", id: "m1")
            try await bob.markRead(Self.general)
            _ = await alice.drain()
            let response = try server.http("GET", "/metrics")
            #expect(response.status == 200)
            let after = try #require(Self.parsePrometheus(response.body), "parses as Prometheus text")
            #expect(after["checkmark_connections"] == 2)
            #expect((after[#"checkmark_events_fanned_out_total{type="message.new"}"#] ?? 0) == (before[#"checkmark_events_fanned_out_total{type="message.new"}"#] ?? 0) + 2)
            #expect(after["checkmark_messages_sent_total"] == 1, "a message is not a confirmation")
            #expect(after[#"checkmark_confirmations_total{type="message"}"#] == nil)
            #expect(after[#"checkmark_confirmations_total{type="read"}"#] == 1)
            #expect((after["checkmark_frames_in_total"] ?? 0) >= 4)
            #expect((after["checkmark_frames_out_total"] ?? 0) > (before["checkmark_frames_out_total"] ?? 0))
            #expect((after["checkmark_commit_duration_seconds_count"] ?? 0) > (before["checkmark_commit_duration_seconds_count"] ?? 0))
            #expect(after["checkmark_receipts_suppressed_by_privacy_total"] == 1, "bob's read reached only his own connection")
            // The process figures a load harness samples from a remote server.
            #expect((after["process_cpu_seconds_total"] ?? 0) > 0)
            #expect((after["process_resident_memory_bytes"] ?? 0) > 1_000_000)
            #expect((after["process_open_fds"] ?? 0) >= 3, "at least the listener and the two clients' sockets")
        }

        @Test func shutdownClosesEveryClientWithGoingAwayAndKeepsEveryAcknowledgedConfirmation() async throws {
            let server = try await TestServer.start()
            try await server.setUp(users: ["alice", "bob"])
            let alice = try await server.connect("alice")
            let bob = try await server.connect("bob")
            try await alice.watch(Self.general)
            for index in 0..<20 { try await alice.sendMessage(Self.general, text: "\(index)", id: "m\(index)") }
            try await bob.markRead(Self.general, messageID: "m10")
            let before = try await server.server.service.read { engine in engine.snapshot() }.get()

            await server.stop(removingData: false)
            for connection in [alice, bob] {
                let closed = await connection.nextEvent(ofType: ["connection.closed"])
                guard case .closed(let code) = closed else {
                    Issue.record("no close: \(String(describing: closed))")
                    continue
                }
                #expect(code == .goingAway)
            }
            #expect((try? server.http("GET", "/healthz"))?.status != 200, "the listener is gone")

            let restarted = try await TestServer.start(directory: server.directory)
            defer { Task { await restarted.stop() } }
            // The channel is loaded as it is first asked for (a restart leaves it in storage).
            let after = try await restarted.server.service.read { engine in try engine.channel(Self.general) }.get()
            #expect(after.messages.heldMessages.map(\.id) == before.channels.first?.messages.heldMessages.map(\.id))
            #expect(after.members["bob"]?.read == before.channels.first?.members["bob"]?.read)
            let bobAgain = try await restarted.connect("bob")
            #expect(bobAgain.me["total_unread_count"]?.intValue == 9, "bob read up to m10 of m0...m19")
        }

        @Test func slowConsumerIsDisconnectedWhileOthersKeepReceiving() async throws {
            let server = try await TestServer.start { 
                $0.gateway.maxOutboundBufferBytes = 256 << 10
                $0.gateway.slowConsumerGraceMilliseconds = 1_000
                $0.gateway.commandBurst = 2_000
            }
            defer { Task { await server.stop() } }
            let readers = (0..<5).map { "reader\($0)" }
            try await server.setUp(users: ["alice", "slow"] + readers)
            // The slow client: upgrades, watches, then never reads again.
            let slow = try RawSocket(port: server.port, receiveBufferSize: 4096)
            let token = TestServer.token("slow")
            let json = ChatConnection.percentEncode(#"{"user_id":"slow"}"#)
            slow.send("GET /connect?json=\(json)&api_key=\(TestServer.apiKey)&authorization=\(token) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            _ = slow.read(until: Array("connection_id".utf8))
            let watch = Array(#"{"type":"watch","cid":"messaging:general"}"#.utf8)
            var frame: [UInt8] = [0x81, 0x80 | UInt8(watch.count), 1, 2, 3, 4]
            frame += watch.enumerated().map { $0.element ^ [1, 2, 3, 4][$0.offset % 4] }
            slow.send(frame)
            try await Task.sleep(for: .milliseconds(200))

            var connections: [ChatConnection] = []
            for reader in readers {
                let connection = try await server.connect(reader)
                try await connection.watch(Self.general)
                connections.append(connection)
            }
            let alice = try await server.connect("alice")
            let text = String(repeating: "x", count: 4_500)
            // ~7 MB to every watcher: past what the kernel buffers for the stalled socket (its send buffer
            // grows to 4 MiB at most) and then past the limit, for longer than the grace period.
            let rounds = 30
            let perRound = 50
            let count = rounds * perRound
            // The readers read all the time, as live clients do, each recording how late each message is.
            let received = try await withThrowingTaskGroup(of: Int.self) { group in
                for connection in connections {
                    group.addTask {
                        var count = 0
                        while count < rounds * perRound, await connection.nextEvent(ofType: ["message.new"], timeout: .seconds(20)) != nil {
                            count += 1
                        }
                        return count
                    }
                }
                // The sender pipelines each round and waits for its last reply: full rate, as fast as commits go.
                for round in 0..<rounds {
                    for index in 0..<perRound - 1 {
                        alice.send(raw: #"{"type":"send_message","cid":"messaging:general","message":{"id":"m\#(round)-\#(index)","text":"\#(text)"}}"#)
                    }
                    try await alice.sendMessage(Self.general, text: text, id: "m\(round)-last")
                }
                var counts: [Int] = []
                for try await count in group { counts.append(count) }
                return counts
            }
            #expect(received == Array(repeating: count, count: readers.count), "every other watcher got every message")
            let metrics = Self.parsePrometheus(try server.http("GET", "/metrics").body) ?? [:]
            #expect(metrics["checkmark_slow_consumer_disconnects_total"] == 1, "only the stalled client")
            // Its close frame waits behind what it never read; the connection is dropped when the close
            // handshake times out (5 s).
            var open = metrics["checkmark_connections"] ?? 0
            for _ in 0..<80 where open > Double(readers.count + 1) {
                try await Task.sleep(for: .milliseconds(100))
                open = Self.parsePrometheus(try server.http("GET", "/metrics").body)?["checkmark_connections"] ?? 0
            }
            #expect(open == Double(readers.count + 1), "the slow one is gone")
        }

        @Test func restServesSetupAndConfirmationsWithStreamShapedErrors() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let auth = ["Authorization": TestServer.serverToken]
            let key = "api_key=\(TestServer.apiKey)"
            let users = try server.http("POST", "/users?\(key)", body: #"{"users":{"ann":{"id":"ann","name":"Ann"},"ben":{"id":"ben"}}}"#, headers: auth)
            #expect(users.status == 200 && users.body.contains(#""ann""#))
            let channel = try server.http("POST", "/channels/messaging/room/query?\(key)", body: #"{"data":{"members":["ann","ben"],"created_by_id":"ann"}}"#, headers: auth)
            #expect(channel.status == 200 && channel.body.contains(#""member_count":2"#))
            let message = try server.http("POST", "/channels/messaging/room/message?\(key)", body: #"{"message":{"id":"r1","text":"hey","user_id":"ann"}}"#, headers: auth)
            #expect(message.status == 200 && message.body.contains(#""id":"r1""#))
            let read = try server.http("POST", "/channels/messaging/room/read?\(key)", body: "{}", headers: ["Authorization": TestServer.token("ben")])
            #expect(read.status == 200)

            let noKey = try server.http("POST", "/users", body: "{}", headers: auth)
            #expect(noKey.status == 401 && noKey.body.contains(#""StatusCode":401"#))
            let userToken = try server.http("POST", "/users?\(key)", body: #"{"users":{"ben":{"name":"B"}}}"#, headers: ["Authorization": TestServer.token("ann")])
            #expect(userToken.status == 403)
            let badJSON = try server.http("POST", "/channels/messaging/room/read?\(key)", body: "{", headers: auth)
            #expect(badJSON.status == 400 && badJSON.body.contains(#""code":4"#))
            let notMember = try server.http("POST", "/channels/messaging/room/read?\(key)", body: "{}", headers: ["Authorization": TestServer.token("zed")])
            #expect(notMember.status == 404 || notMember.status == 403)
            let unknown = try server.http("GET", "/nope?\(key)", headers: auth)
            #expect(unknown.status == 404)
        }
    }
}
