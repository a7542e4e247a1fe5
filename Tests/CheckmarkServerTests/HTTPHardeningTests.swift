import CheckmarkAuth
import CheckmarkClient
import CheckmarkCore
@testable import CheckmarkServer
import CheckmarkTestSupport
import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension EndToEnd {
    /// Issue 18 (hardening), the HTTP listener: slow requests, bad framing, pipelining, connections
    /// that never finish a request, and the descriptor limit. Each test is the regression test of what
    /// an attacker did.
    @Suite("Hardening: the HTTP listener", .serialized)
    struct HTTPHardeningTests {
        /// The status of each response in `bytes`, in order.
        static func statuses(_ bytes: [UInt8]) -> [Int] {
            let text = String(decoding: bytes, as: UTF8.self)
            return text.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
        }

        /// Whether `text` holds the JSON error every refusal has: `{code, message, StatusCode, duration, error_code}`.
        static func isJSONError(_ text: String, status: Int, code: String) -> Bool {
            text.contains("Content-Type: application/json") && text.contains(#""StatusCode":\#(status)"#)
                && text.contains(#""error_code":"\#(code)""#) && text.contains(#""message":"#)
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
            let text = String(decoding: answer, as: UTF8.self)
            #expect(Self.statuses(answer) == [408], "\(text)")
            #expect(Self.isJSONError(text, status: 408, code: "request_timeout"), "\(text)")
            #expect(text.contains("Connection: close"))
            #expect(Date().timeIntervalSince(started) < 3, "the body had to arrive within the timeout, trickle or not")
        }

        /// Issue 42: an idle keep-alive connection was sent an unsolicited 408 before it was closed; a
        /// client reusing the connection at that moment took the 408 for the answer to its new request.
        @Test func anIdleKeepAliveConnectionIsClosedWithoutAResponse() async throws {
            let server = try await TestServer.start { $0.requestTimeoutSeconds = 1 }
            defer { Task { await server.stop() } }
            let socket = try RawSocket(port: server.port)
            socket.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(Self.statuses(socket.read(until: Array("ok\n".utf8))) == [200])
            let idle = Date()
            let after = socket.readAll()
            #expect(after.isEmpty, "\(String(decoding: after, as: UTF8.self))")
            #expect(Date().timeIntervalSince(idle) > 0.8 && Date().timeIntervalSince(idle) < 3, "closed once the idle timeout passed")
        }

        @Test func aRequestWhoseHeadStallsHalfwayStillGets408() async throws {
            let server = try await TestServer.start { $0.requestTimeoutSeconds = 1 }
            defer { Task { await server.stop() } }
            // On a new connection, and on a kept-alive one after its first answer.
            let fresh = try RawSocket(port: server.port)
            fresh.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            let reused = try RawSocket(port: server.port)
            reused.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(Self.statuses(reused.read(until: Array("ok".utf8))) == [200])
            reused.send("GET /healthz HTTP/1.1\r\nHo")
            for socket in [fresh, reused] {
                let answer = socket.readAll()
                #expect(Self.statuses(answer) == [408], "\(String(decoding: answer, as: UTF8.self))")
            }
        }

        @Test func malformedTransferEncodingIsAnswered400() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let framings = [
                "Transfer-Encoding: chunked\r\n\r\nZZZ\r\nnot hex\r\n",                // chunk size not hex
                "Transfer-Encoding: chunked, chunked\r\nContent-Length: 3\r\n\r\nabc", // chunked twice
                "Transfer-Encoding: gzip\r\n\r\nabc",                                 // not ending in chunked
                "Transfer-Encoding: xchunked\r\n\r\nabc",                             // unknown coding
                "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n", // both framings
                "Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",                 // two lengths
            ]
            for framing in framings {
                let socket = try RawSocket(port: server.port)
                socket.send("POST /users?api_key=\(TestServer.apiKey) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(framing)")
                let answer = socket.readAll()
                let text = String(decoding: answer, as: UTF8.self)
                #expect(Self.statuses(answer) == [400], "\(framing.debugDescription): \(text)")
                #expect(Self.isJSONError(text, status: 400, code: "invalid_argument"), "\(framing.debugDescription): \(text)")
            }
        }

        @Test func malformedRequestPipelinedBehindAnotherIsAnswered400AfterIt() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let socket = try RawSocket(port: server.port)
            // A good request, then one the parser cannot frame, in one write: the first is answered,
            // then the second gets its 400 (not a silent close behind the first answer).
            socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nPOST /users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n")
            let answer = socket.readAll()
            let text = String(decoding: answer, as: UTF8.self)
            #expect(Self.statuses(answer) == [200, 400], "\(text)")
            #expect(Self.isJSONError(text, status: 400, code: "invalid_argument"), "\(text)")
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
            let answer = refused.readAll()
            #expect(Self.statuses(answer) == [503])
            #expect(Self.isJSONError(String(decoding: answer, as: UTF8.self), status: 503, code: "unavailable"))
            // A place freed is a place to take.
            slow.removeAll()
            try await Task.sleep(for: .milliseconds(200))
            #expect(try server.http("GET", "/healthz").status == 200)
        }

        @Test func healthzAnswersWithinASecondWhileSlowClientsAreAttached() async throws {
            let server = try await TestServer.start { $0.requestTimeoutSeconds = 2 }
            defer { Task { await server.stop() } }
            // 100 clients that send a body a byte at a time, as in the attack (there 300, a byte a second).
            var slow: [RawSocket] = []
            for _ in 0..<100 {
                let socket = try RawSocket(port: server.port)
                socket.send("POST /users HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
                slow.append(socket)
            }
            let started = Date()
            for _ in 0..<6 {
                for socket in slow { socket.send("x") }
                let asked = Date()
                #expect(try server.http("GET", "/healthz").status == 200)
                #expect(Date().timeIntervalSince(asked) < 1, "/healthz answered within a second")
                try await Task.sleep(for: .milliseconds(200))
            }
            // None of them is served forever: each is answered 408 once the request timeout has passed.
            try await Task.sleep(for: .seconds(2.6 - Date().timeIntervalSince(started)))
            var answered = 0
            for socket in slow where Self.isReadable(socket) {
                if Self.statuses(socket.readAll()) == [408] { answered += 1 }
            }
            #expect(answered == slow.count, "\(answered) of \(slow.count) slow clients answered 408 within the request timeout")
        }

        @Test func acceptPausesInsteadOfSpinningAtTheDescriptorLimit() async throws {
            let directory = NSTemporaryDirectory() + "checkmark-fd-limit-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let server = try ServerProcess(dataDirectory: directory)
            let pid = server.process.processIdentifier
            // The server's own descriptors, and room for 16 connections more.
            let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
            try Self.limitDescriptors(of: pid, to: open + 16)
            // 40 clients that never finish a request: 16 are accepted, the rest wait in the backlog and
            // every accept of theirs fails with EMFILE.
            var clients: [RawSocket] = []
            for _ in 0..<40 {
                let socket = try RawSocket(port: server.port)
                socket.send("POST /users HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
                clients.append(socket)
            }
            try await Task.sleep(for: .milliseconds(200))
            let before = try Self.cpuSeconds(of: pid)
            try await Task.sleep(for: .milliseconds(1500))
            let spent = try Self.cpuSeconds(of: pid) - before
            #expect(spent < 0.3, "\(spent) s of CPU in 1.5 s at the descriptor limit: the accept loop spins")
            // Descriptors freed, accepting resumes after the pause.
            clients.removeAll()
            let asked = Date()
            let health = try RawSocket(port: server.port)
            health.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(Self.statuses(health.readAll()) == [200])
            #expect(Date().timeIntervalSince(asked) < 3)
        }

        @Test func refusalsAreLoggedOnceWithThePeerAndRateLimited() async throws {
            let captured = CapturedLog()
            var logger = Logger(label: "checkmark-test-refusals") { _ in CapturingLogHandler(log: captured) }
            logger.logLevel = .notice
            let server = try await TestServer.start(logger: logger)
            defer { Task { await server.stop() } }

            // A client that leaves in the middle of a request, or between requests, was not refused.
            do {
                let left = try RawSocket(port: server.port)
                left.send("POST /users HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
                let idle = try RawSocket(port: server.port)
                idle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                _ = idle.read(until: Array("ok".utf8))
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(captured.refusals.isEmpty, "\(captured.refusals.map(\.message))")

            // 60 malformed requests at once, then one more after a second.
            for _ in 0..<60 {
                let socket = try RawSocket(port: server.port)
                socket.send("POST /users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc")
                #expect(Self.statuses(socket.readAll()) == [400])
            }
            try await Task.sleep(for: .milliseconds(1100))
            let last = try RawSocket(port: server.port)
            last.send("NOT HTTP\r\n\r\n")
            #expect(Self.statuses(last.readAll()) == [400])
            try await Task.sleep(for: .milliseconds(100))

            let lines = captured.refusals
            #expect(lines.allSatisfy { $0.level == .notice })
            #expect(lines.allSatisfy { $0.metadata["status"] == "400" && "\($0.metadata["peer"] ?? "-")".hasPrefix("127.0.0.1:") },
                    "\(lines.map(\.metadata))")
            #expect(lines.count <= 41, "at most 20 lines a second: \(lines.count)")
            // Each refusal is either a line or counted in the next line's `suppressed`: once each.
            let accounted = lines.reduce(0) { $0 + 1 + (Int("\($1.metadata["suppressed"] ?? "0")") ?? 0) }
            #expect(accounted == 61)
            #expect(lines.last.map { $0.message.contains("malformed HTTP request") } == true)
        }

        /// Issue 18: REST refusals named no address, refused socket commands were not logged at all, and
        /// a refused socket (4001) named nobody. Each is now one line with who was refused.
        @Test func restAndSocketRefusalsAreLoggedOnceWithThePeerAndWhoWasRefused() async throws {
            let captured = CapturedLog()
            var logger = Logger(label: "checkmark-test-refusals") { _ in CapturingLogHandler(log: captured) }
            logger.logLevel = .notice
            let server = try await TestServer.start(logger: logger)
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["ann", "bob"], members: ["ann"])

            // REST: bob may not post in a channel he is not a member of (403).
            let bob = ["Authorization": TestServer.token("bob"), "stream-auth-type": "jwt"]
            let posted = try server.http("POST", "/channels/messaging/general/message?api_key=\(TestServer.apiKey)",
                                         body: #"{"message":{"text":"hi"}}"#, headers: bob)
            #expect(posted.status == 403)
            // The socket: the same refusal as a command's error reply.
            let socket = try await server.connect("bob")
            await #expect(throws: (any Error).self) { try await socket.markRead(TestServer.general) }
            // The socket: a bad token, refused with 4001.
            await #expect(throws: (any Error).self) { _ = try await server.connect("bob", token: TestServer.token("bob", secret: "another-secret-0123456789")) }
            try await Task.sleep(for: .milliseconds(200))

            let lines = captured.refusals
            let rest = lines.filter { $0.metadata["route"] != nil }
            let command = lines.filter { $0.metadata["request_id"] != nil && $0.metadata["route"] == nil }
            let closed = lines.filter { $0.metadata["close_code"] == "4001" }
            #expect(rest.count == 1 && command.count == 1 && closed.count == 1, "\(lines.map { "\($0.message) \($0.metadata)" })")
            for line in rest + command + closed {
                #expect("\(line.metadata["peer"] ?? "-")".hasPrefix("127.0.0.1:"), "\(line.message) \(line.metadata)")
            }
            #expect(rest.first?.metadata["caller"].map { "\($0)".contains("bob") } == true)
            #expect(command.first?.metadata["user_id"] == "bob" && command.first?.metadata["connection_id"] != "-")
            #expect(command.first?.metadata["status"] == "403")
        }

        /// `token_clock_skew`: a token whose `nbf` lies 2 minutes ahead is refused within the default
        /// minute and accepted within 5 minutes; `refusal_log_lines_per_second` bounds the lines.
        @Test func tokenClockSkewAndRefusalLogRateAreTheConfiguredOnes() async throws {
            let ahead = Double(WallClock.now().rawValue / 1_000_000 + 120)
            let token = JWT.sign(claims: .object([("user_id", .string("ann")), ("nbf", .number(ahead))]), secret: TestServer.apiSecret)
            let headers = ["Authorization": token, "stream-auth-type": "jwt"]
            let strict = try await TestServer.start()
            #expect(try strict.http("GET", "/unread?api_key=\(TestServer.apiKey)", headers: headers).status == 401)
            await strict.stop()

            let captured = CapturedLog()
            var logger = Logger(label: "checkmark-test-skew") { _ in CapturingLogHandler(log: captured) }
            logger.logLevel = .notice
            let lenient = try await TestServer.start(logger: logger) {
                $0.tokenClockSkewSeconds = 300
                $0.refusalLogLinesPerSecond = 3
            }
            defer { Task { await lenient.stop() } }
            try await lenient.setUp(users: ["ann"], members: ["ann"])
            #expect(try lenient.http("GET", "/unread?api_key=\(TestServer.apiKey)", headers: headers).status == 200)
            for _ in 0..<10 { #expect(try lenient.http("GET", "/unread?api_key=wrong", headers: headers).status == 401) }
            #expect(captured.refusals.count == 3, "\(captured.refusals.count) refusal lines for 10 refusals within a second")
        }

        // MARK: Helpers

        /// Whether the server has answered (or closed) `socket` already.
        static func isReadable(_ socket: RawSocket) -> Bool {
            var descriptor = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
            return poll(&descriptor, 1, 0) == 1
        }

        /// Lowers the open-file limit of another process (prlimit(2), not in the Glibc module).
        static func limitDescriptors(of pid: pid_t, to count: Int) throws {
            typealias Prlimit = @convention(c) (pid_t, Int32, UnsafePointer<rlimit>?, UnsafeMutablePointer<rlimit>?) -> Int32
            guard let symbol = dlsym(nil, "prlimit") else { throw RawSocketError.failed("prlimit") }
            var limit = rlimit(rlim_cur: rlim_t(count), rlim_max: rlim_t(count))
            guard unsafeBitCast(symbol, to: Prlimit.self)(pid, Int32(RLIMIT_NOFILE.rawValue), &limit, nil) == 0 else {
                throw RawSocketError.failed("prlimit: errno \(errno)")
            }
        }

        /// User and system CPU time of a process so far, from /proc.
        static func cpuSeconds(of pid: pid_t) throws -> Double {
            let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            guard let end = stat.lastIndex(of: ")") else { throw RawSocketError.failed("stat") }
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { throw RawSocketError.failed("stat") }
            return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
    }
}
