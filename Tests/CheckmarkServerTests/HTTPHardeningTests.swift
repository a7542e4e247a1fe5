import CheckmarkClient
import CheckmarkCore
@testable import CheckmarkServer
import Foundation
import NIOCore
import Testing

extension EndToEnd {
    /// Issue 18 (hardening), the HTTP listener: slow requests, bad framing, pipelining, and connections
    /// that never finish a request. Each test is the regression test of what an attacker did.
    @Suite("Hardening: the HTTP listener", .serialized)
    struct HTTPHardeningTests {
        /// The status of each response in `bytes`, in order.
        static func statuses(_ bytes: [UInt8]) -> [Int] {
            let text = String(decoding: bytes, as: UTF8.self)
            return text.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
        }

        @Test func slowBodyIsAnswered408WithinTheRequestTimeout() async throws {
            let server = try await TestServer.start { $0.requestTimeoutSeconds = 1 }
            defer { Task { await server.stop() } }
            let socket = try RawSocket(port: server.port)
            socket.send("POST /users?api_key=\(TestServer.apiKey) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: \(TestServer.serverToken)\r\nContent-Length: 1000\r\n\r\n{\"us")
            let started = Date()
            for _ in 0..<2 {
                try await Task.sleep(for: .milliseconds(400))
                socket.send("e")
            }
            let answer = socket.readAll()
            #expect(Self.statuses(answer) == [408], "\(String(decoding: answer, as: UTF8.self))")
            #expect(String(decoding: answer, as: UTF8.self).contains("request_timeout"))
            #expect(Date().timeIntervalSince(started) < 3, "the body had to arrive within the timeout, trickle or not")
        }

        @Test func malformedTransferEncodingIsAnswered400() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            for framing in ["Transfer-Encoding: chunked\r\n\r\nZZZ\r\nnot hex\r\n", "Transfer-Encoding: chunked, chunked\r\nContent-Length: 3\r\n\r\nabc"] {
                let socket = try RawSocket(port: server.port)
                socket.send("POST /users?api_key=\(TestServer.apiKey) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(framing)")
                let answer = socket.readAll()
                #expect(Self.statuses(answer) == [400], "\(framing.debugDescription): \(String(decoding: answer, as: UTF8.self))")
            }
        }

        @Test func pipelinedRequestsAreAnsweredInOrderAndABodyAfterAnAnswerIsRead() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let socket = try RawSocket(port: server.port)
            let body = #"{"users":{"pip":{"id":"pip"}}}"#
            let post = "POST /users?api_key=\(TestServer.apiKey) HTTP/1.1\r\nHost: x\r\nAuthorization: \(TestServer.serverToken)\r\nContent-Length: \(body.utf8.count)\r\n"
            // A whole request and the head of a second at once; the second's body only after the first answer.
            socket.send(post + "\r\n" + body + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + post + "Connection: close\r\n\r\n")
            let first = socket.read(until: Array("ok".utf8))
            #expect(Self.statuses(first) == [200, 200])
            try await Task.sleep(for: .milliseconds(200))
            socket.send(body)
            let rest = socket.readAll()
            #expect(Self.statuses(rest) == [200], "the body that came after the first answer was read: \(String(decoding: rest, as: UTF8.self))")
        }

        @Test func postPipelinedBeforeAnUpgradeIsAnsweredBeforeTheUpgrade() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let body = #"{"users":{"pip":{"id":"pip"}}}"#
            let json = ChatConnection.percentEncode(#"{"user_id":"pip","user_details":{"id":"pip"}}"#)
            let socket = try RawSocket(port: server.port)
            socket.send("POST /users?api_key=\(TestServer.apiKey) HTTP/1.1\r\nHost: x\r\nAuthorization: \(TestServer.serverToken)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                + "GET /connect?json=\(json)&api_key=\(TestServer.apiKey)&authorization=\(TestServer.token("pip")) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            let answer = String(decoding: socket.read(until: Array("connection_id".utf8)), as: UTF8.self)
            let answered = answer.range(of: "HTTP/1.1 200")
            let upgraded = answer.range(of: "HTTP/1.1 101")
            #expect(answered != nil && upgraded != nil && answered!.lowerBound < upgraded!.lowerBound, "\(answer.prefix(300))")
            #expect(answer.contains("health.check"))
        }

        @Test func pendingConnectionsPastTheLimitAreRefusedAndHealthzStillAnswers() async throws {
            let server = try await TestServer.start {
                $0.maxPendingConnections = 8
                $0.requestTimeoutSeconds = 30
            }
            defer { Task { await server.stop() } }
            // Six clients that start a request and never finish it.
            var slow: [RawSocket] = []
            for _ in 0..<6 {
                let socket = try RawSocket(port: server.port)
                socket.send("POST /users HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
                slow.append(socket)
            }
            try await Task.sleep(for: .milliseconds(100))
            let started = Date()
            #expect(try server.http("GET", "/healthz").status == 200)
            #expect(Date().timeIntervalSince(started) < 1)
            for _ in 0..<2 {
                let socket = try RawSocket(port: server.port)
                socket.send("POST /users HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
                slow.append(socket)
            }
            try await Task.sleep(for: .milliseconds(100))
            let refused = try RawSocket(port: server.port)
            refused.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(Self.statuses(refused.readAll()) == [503])
            // A place freed is a place to take.
            slow.removeAll()
            try await Task.sleep(for: .milliseconds(200))
            #expect(try server.http("GET", "/healthz").status == 200)
        }
    }
}
