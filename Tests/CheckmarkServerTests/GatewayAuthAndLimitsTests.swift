import CheckmarkClient
import CheckmarkCore
@testable import CheckmarkServer
import CheckmarkWebSocket
import NIOCore
import Testing

extension EndToEnd {
    /// Authentication failures, bad input and limits: each answered with an error event that says why
    /// and, where the connection ends, the documented close code; never a silent drop or a crash.
    @Suite("Gateway: authentication, bad input, limits", .serialized)
    struct GatewayAuthAndLimitsTests {
        static let general = TestServer.general

        static func refusal(_ body: () async throws -> ChatConnection) async -> (String?, WebSocketCloseCode?) {
            do {
                let connection = try await body()
                connection.close()
                return (nil, nil)
            } catch let ChatClientError.refused(code, _, closeCode) {
                return (code, closeCode)
            } catch {
                return ("\(error)", nil)
            }
        }

        /// Also the regression test for the refusal event that was pushed through the HTTP encoder (it
        /// is sent while the connection is being set up) and crashed the server.
        @Test func authenticationFailuresSendAnErrorEventAndADocumentedCloseCode() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let wrongKey = await Self.refusal { try await server.connect("alice", apiKey: "other-key") }
            #expect(wrongKey.0 == "authentication_failed" && wrongKey.1 == GatewayCloseCode.authenticationFailed)
            let wrongSecret = await Self.refusal { try await server.connect("alice", token: TestServer.token("alice", secret: "another-secret-0123")) }
            #expect(wrongSecret.0 == "authentication_failed" && wrongSecret.1 == GatewayCloseCode.authenticationFailed)
            let otherUser = await Self.refusal { try await server.connect("alice", token: TestServer.token("bob")) }
            #expect(otherUser.0 == "authentication_failed" && otherUser.1 == GatewayCloseCode.authenticationFailed)
            let expired = await Self.refusal { try await server.connect("alice", token: TestServer.token("alice", expiresIn: -10)) }
            #expect(expired.0 == "token_expired" && expired.1 == GatewayCloseCode.tokenExpired)
            let garbage = await Self.refusal { try await server.connect("alice", token: "not.a.token") }
            #expect(garbage.0 == "authentication_failed" && garbage.1 == GatewayCloseCode.authenticationFailed)
            // A token that expires later is honoured.
            let fine = try await server.connect("alice", token: TestServer.token("alice", expiresIn: 60))
            #expect(fine.me["id"]?.stringValue == "alice")
            #expect(fine.me["privacy_settings"]?["read_receipts"]?["enabled"]?.boolValue == true)
        }

        @Test func badCommandsGetErrorRepliesAndTheConnectionStaysUsable() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob"])
            let alice = try await server.connect("alice")
            for (raw, code) in [
                ("not json", "invalid_argument"), (#"{"type":"teleport","request_id":"x"}"#, "invalid_argument"),
                (#"{"type":"mark_read","request_id":"y","cid":"nocolon"}"#, "invalid_argument"), ("[1,2]", "invalid_argument"),
                (#"{"type":"send_message","request_id":"z","cid":"messaging:general","message":{"text":5}}"#, "invalid_argument"),
            ] {
                alice.send(raw: raw)
                let error = await alice.nextEvent(ofType: ["error"])
                #expect(error?.json?["error"]?["error_code"]?.stringValue == code, "\(raw)")
                #expect(error?.json?["error"]?["StatusCode"]?.intValue == 400)
            }
            await #expect {
                try await alice.markRead(Self.general, messageID: "no-such-message")
            } throws: { ($0 as? ChatClientError)?.code == "unknown_message" }
            // Mark unread reaches only the last 100 channel messages.
            try await alice.watch(Self.general)
            for index in 0...100 { try await server.run(.sendMessage(cid: Self.general, userID: "bob", draft: MessageDraft(id: "b\(index)", text: "x"))) }
            await #expect {
                try await alice.markUnread(Self.general, messageID: "b0")
            } throws: { ($0 as? ChatClientError)?.code == "message_too_old" }
            try await alice.markUnread(Self.general, messageID: "b1")
            // Still connected and answered.
            try await alice.markRead(Self.general)
            alice.send(raw: #"[{"type":"health.check","client_id":"abc"}]"#)
            #expect(await alice.nextEvent(ofType: ["health.check"])?.json?["connection_id"]?.stringValue == alice.connectionID)
        }

        /// Connections of one user arriving together are admitted against the limit one by one,
        /// counting those still registering: only admitted ones change the profile they carry.
        @Test func simultaneousConnectionsOfAUserAtItsLimitChangeOnlyWhatTheAdmittedOneCarries() async throws {
            let server = try await TestServer.start { $0.gateway.maxConnectionsPerUser = 2 }
            defer { Task { await server.stop() } }
            let first = try await server.connect("alice")
            let outcomes = await withTaskGroup(of: (String, ChatConnection?).self) { group in
                for index in 0..<8 {
                    let name = "Alice \(index)"
                    group.addTask { (name, try? await server.connect("alice", details: [("name", .string(name))])) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let admitted = outcomes.filter { $0.1 != nil }
            #expect(admitted.count == 1, "\(admitted.map(\.0))")
            let name = try await server.server.service.read { $0.users["alice"]?.name }.get()
            #expect(name == admitted.first?.0, "the profile is the admitted connection's, not a refused one's: \(name ?? "-")")
            #expect(server.server.gateway.counter.registrations == 0, "every admitted registration ended")
            for connection in [first] + admitted.compactMap(\.1) { connection.close() }
        }

        @Test func connectionLimitsRefuseWithTooManyConnections() async throws {
            let server = try await TestServer.start { $0.gateway.maxConnectionsPerUser = 2; $0.gateway.maxConnections = 3 }
            defer { Task { await server.stop() } }
            let first = try await server.connect("alice")
            let second = try await server.connect("alice")
            let third = await Self.refusal { try await server.connect("alice") }
            #expect(third.0 == "too_many_connections" && third.1 == GatewayCloseCode.tooManyConnections)
            // Refused before the profile it carries changes anything.
            let renamed = await Self.refusal { try await server.connect("alice", details: [("name", .string("Not Alice"))]) }
            #expect(renamed.0 == "too_many_connections")
            #expect(try await server.server.service.read { $0.users["alice"]?.name }.get() != "Not Alice")
            let bob = try await server.connect("bob")
            let carol = await Self.refusal { try await server.connect("carol") }
            #expect(carol.0 == "too_many_connections", "the server-wide limit holds too")
            // A closed connection frees its slot.
            first.close()
            #expect(await first.nextEvent(ofType: ["connection.closed"]) != nil)
            try await Task.sleep(for: .milliseconds(100))
            let again = try await server.connect("alice")
            for connection in [second, bob, again] { connection.close() }
        }

        @Test func watchedChannelAndCommandRateLimits() async throws {
            let server = try await TestServer.start {
                $0.gateway.maxWatchedChannelsPerConnection = 2
                $0.gateway.commandsPerSecond = 5
                $0.gateway.commandBurst = 5
            }
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice"])
            for id in ["b", "c"] {
                try await server.run(.createChannel(cid: ChannelCID(type: "messaging", id: id), createdBy: "alice", members: ["alice"]))
            }
            let alice = try await server.connect("alice")
            try await alice.watch(Self.general)
            try await alice.watch(ChannelCID(type: "messaging", id: "b"))
            await #expect {
                try await alice.watch(ChannelCID(type: "messaging", id: "c"))
            } throws: { ($0 as? ChatClientError)?.code == "too_many_watched_channels" }
            // Over the rate: refused with rate_limited; sustained: closed with 4008.
            var codes: [String] = []
            // The three watches took three of the five tokens: two more pass, the next four are refused.
            for _ in 0..<6 {
                alice.send(raw: #"{"type":"mark_read","cid":"messaging:general"}"#)
            }
            let answers = await alice.drain()
            for event in answers where event.type == "error" {
                codes.append(event.json?["error"]?["error_code"]?.stringValue ?? "")
            }
            #expect(codes == ["rate_limited", "rate_limited", "rate_limited", "rate_limited"])
            #expect(!answers.contains { $0.type == "connection.closed" }, "a short excess is refused, not punished")
            for _ in 0..<20 { alice.send(raw: #"{"type":"mark_read","cid":"messaging:general"}"#) }
            let closed = await alice.nextEvent(ofType: ["connection.closed"])
            if case .closed(let code) = closed { #expect(code == GatewayCloseCode.rateLimited) } else { Issue.record("not closed: \(String(describing: closed))") }
        }
    }
}
