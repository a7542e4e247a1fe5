import CheckmarkServer
import CheckmarkTestSupport
import Foundation
import Logging
import NIOPosix
import Testing

extension EndToEnd {
    /// `cors_allowed_origins` on a real server: preflights answered or refused with the JSON error, and
    /// every REST answer to an allowed origin readable by its page, errors included.
    @Suite("CORS", .serialized)
    struct CORSTests {
        static let app = "http://localhost:5173"
        static let key = "api_key=\(TestServer.apiKey)"

        static func preflight(_ server: TestServer, from origin: String, method: String = "POST", path: String = "/channels/messaging/general/message") throws -> HTTPExchange {
            try HTTPExchange.send(port: server.port, "OPTIONS", path + "?" + key, headers: [
                "Origin": origin, "Access-Control-Request-Method": method,
                "Access-Control-Request-Headers": "authorization,content-type,stream-auth-type,x-stream-client",
            ])
        }

        @Test func aPreflightFromAnAllowedOriginIs204WithTheHeaders() async throws {
            let server = try await TestServer.start { $0.cors = try! CORSPolicy(setting: "https://app.example, \(CORSTests.app)") }
            defer { Task { await server.stop() } }
            let answer = try Self.preflight(server, from: Self.app)
            #expect(answer.status == 204)
            #expect(answer.header("Access-Control-Allow-Origin") == Self.app)
            #expect(answer.header("Access-Control-Allow-Methods")?.contains("PATCH") == true)
            let allowed = answer.header("Access-Control-Allow-Headers")?.lowercased() ?? ""
            for name in ["authorization", "content-type", "stream-auth-type", "x-stream-client"] { #expect(allowed.contains(name)) }
            #expect(answer.header("Access-Control-Max-Age") == "600")
            #expect(answer.header("Vary") == "Origin")
            #expect(answer.body.isEmpty)
        }

        @Test func aPreflightFromAnotherOriginIs403WithTheJSONError() async throws {
            let server = try await TestServer.start { $0.cors = try! CORSPolicy(setting: CORSTests.app) }
            defer { Task { await server.stop() } }
            let answer = try Self.preflight(server, from: "http://localhost:5174")
            #expect(answer.status == 403)
            #expect(answer.header("Access-Control-Allow-Origin") == nil)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
            #expect(json["StatusCode"] as? Int == 403)
            #expect(json["code"] as? Int == 17)
            #expect((json["message"] as? String)?.contains("http://localhost:5174") == true)
        }

        @Test func everyPreflightIs403WhenCORSIsOffAsByDefault() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let answer = try Self.preflight(server, from: Self.app)
            #expect(answer.status == 403)
            #expect(answer.header("Access-Control-Allow-Origin") == nil)
            #expect(answer.body.contains("cors_allowed_origins"))
            // Without CORS nothing changes for ordinary requests, which carry no CORS header.
            let plain = try HTTPExchange.send(port: server.port, "GET", "/unread?\(Self.key)&user_id=nobody",
                                              headers: ["Origin": Self.app, "Authorization": TestServer.serverToken])
            #expect(plain.header("Access-Control-Allow-Origin") == nil)
            #expect(plain.header("Vary") == nil)
        }

        @Test func aRefusedPreflightIsLoggedOnceWithThePeerAndTheReason() async throws {
            let captured = CapturedLog()
            var logger = Logger(label: "checkmark-test-cors") { _ in CapturingLogHandler(log: captured) }
            logger.logLevel = .notice
            let policy = try CORSPolicy(setting: Self.app)
            let server = try await TestServer.start(logger: logger) { $0.cors = policy }
            defer { Task { await server.stop() } }
            #expect(try Self.preflight(server, from: Self.app).status == 204)
            #expect(try Self.preflight(server, from: "https://evil.example").status == 403)
            try await Task.sleep(for: .milliseconds(100))
            let lines = captured.refusals
            #expect(lines.count == 1, "\(lines.map(\.message))")
            #expect(lines.first?.message == "refused: cors_preflight")
            #expect(lines.first?.metadata["reason"]?.description.contains("https://evil.example") == true)
            #expect(lines.first?.metadata["peer"]?.description.contains("127.0.0.1") == true)
        }

        @Test func restAnswersToAnAllowedOriginCarryAllowOriginErrorsIncluded() async throws {
            let server = try await TestServer.start { $0.cors = try! CORSPolicy(setting: CORSTests.app) }
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["ana", "ben"])
            let origin = ["Origin": Self.app]
            let sent = try HTTPExchange.send(port: server.port, "POST", "/channels/messaging/general/message?\(Self.key)",
                                             body: #"{"message":{"text":"hi"}}"#,
                                             headers: origin.merging(["Authorization": TestServer.token("ana")]) { a, _ in a })
            #expect(sent.status == 201 || sent.status == 200)
            let unauthenticated = try HTTPExchange.send(port: server.port, "POST", "/channels/messaging/general/read?\(Self.key)",
                                                        body: "{}", headers: origin)
            let notFound = try HTTPExchange.send(port: server.port, "POST", "/channels/messaging/nowhere/read?\(Self.key)",
                                                 body: "{}", headers: origin.merging(["Authorization": TestServer.token("ana")]) { a, _ in a })
            let wrongMethod = try HTTPExchange.send(port: server.port, "DELETE", "/users?\(Self.key)", headers: origin)
            for (answer, status) in [(unauthenticated, 401), (notFound, 404), (wrongMethod, 405)] {
                #expect(answer.status == status)
                #expect(answer.header("Access-Control-Allow-Origin") == Self.app, "the \(status) answer")
                #expect(answer.header("Vary") == "Origin")
            }
            #expect(sent.header("Access-Control-Allow-Origin") == Self.app)
            #expect(sent.header("Access-Control-Expose-Headers") != nil)
        }

        @Test func answersToAnotherOriginCarryNoAllowOrigin() async throws {
            let server = try await TestServer.start { $0.cors = try! CORSPolicy(setting: CORSTests.app) }
            defer { Task { await server.stop() } }
            let answer = try HTTPExchange.send(port: server.port, "GET", "/healthz", headers: ["Origin": "https://evil.example"])
            #expect(answer.status == 200)
            #expect(answer.header("Access-Control-Allow-Origin") == nil)
            #expect(answer.header("Vary") == "Origin")
        }
    }
}
