import CheckmarkClient
import CheckmarkServer
import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore
import NIOPosix
import Testing

extension EndToEnd {
    /// The WebSocket layer end to end: the real listener on 127.0.0.1, real sockets, hostile input.
    @Suite("WebSocket server end to end", .serialized)
    struct EchoServerTests {
        static let upgrade = "GET /chat HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

        static func withEchoServer(httpLimits: HTTPLimits = HTTPLimits(headTimeout: .seconds(1)),
                                   timeouts: WebSocketTimeouts = WebSocketTimeouts(closeTimeout: .seconds(1), keepaliveInterval: nil, idleTimeout: nil),
                                   _ body: (Int) async throws -> Void) async throws {
            let listener = try await HTTPListener.bind(
                host: "127.0.0.1", port: 0, group: MultiThreadedEventLoopGroup.singleton, routes: EchoRoutes(),
                handshake: ServerHandshake(), httpLimits: httpLimits,
                webSocket: WebSocketSettings(limits: WebSocketLimits(maxFrameSize: 1 << 20, maxMessageSize: 1 << 20), timeouts: timeouts))
            do {
                try await body(listener.port)
            } catch {
                try? await listener.close()
                throw error
            }
            try await listener.close()
        }

        static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

        @Test func clientAndServerEchoOverRealSockets() async throws {
            try await Self.withEchoServer { port in
                for compression in [PerMessageDeflateConfiguration.disabled, PerMessageDeflateConfiguration()] {
                    let connection = try await WebSocketClient.connect(
                        to: WebSocketURL(host: "127.0.0.1", port: port, target: "/x"), compression: compression)
                    let big = String(repeating: "✓✓ read ", count: 500)
                    connection.send(text: "hello")
                    connection.send(text: big)
                    connection.close()
                    var received: [WebSocketClientConnection.Event] = []
                    for await event in connection.events { received.append(event) }
                    #expect(received.count == 3)
                    #expect(received.first == .text("hello"))
                    #expect(received.dropFirst().first == .text(big), "the long message comes back whole")
                    #expect(received.last == .closed(.normalClosure))
                }
            }
        }

        @Test func framesSentTogetherWithTheUpgradeRequestAreNotLost() async throws {
            try await Self.withEchoServer { port in
                let socket = try RawSocket(port: port)
                // Request and a masked "Hello" in one write.
                socket.send(Array(Self.upgrade.utf8) + [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
                let head = socket.read(until: Array("\r\n\r\n".utf8))
                #expect(Self.text(head).hasPrefix("HTTP/1.1 101"))
                #expect(Self.text(head).contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
                #expect(socket.read(until: Array("Hello".utf8)) == [0x81, 0x05] + Array("Hello".utf8))
            }
        }

        @Test func serverRejectsUnmaskedFrameWithCloseAndReleasesTheConnection() async throws {
            try await Self.withEchoServer { port in
                let socket = try RawSocket(port: port)
                socket.send(Self.upgrade)
                _ = socket.read(until: Array("\r\n\r\n".utf8))
                socket.send([0x81, 0x05] + Array("Hello".utf8))
                let reply = socket.readAll()
                #expect(reply == [0x88, 0x1C, 0x03, 0xEA] + Array("client frame is not masked".utf8))
            }
        }

        @Test(arguments: [
            ("GARBAGE\r\n\r\n", "HTTP/1.1 400"),
            ("GET /chat HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 426"),
            ("POST /chat HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 405"),
            ("GET /chat HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", "HTTP/1.1 426"),
            ("GET /chat HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n", "HTTP/1.1 400"),
        ])
        func badUpgradeRequestsGetAStatusAndAReason(request: String, status: String) async throws {
            try await Self.withEchoServer { port in
                let socket = try RawSocket(port: port)
                socket.send(request)
                let reply = Self.text(socket.readAll())
                #expect(reply.hasPrefix(status), "\(reply)")
                #expect(reply.contains("Content-Type: text/plain"))
            }
        }

        @Test func oversizedRequestHeadGets431() async throws {
            try await Self.withEchoServer(httpLimits: HTTPLimits(maxHeadSize: 4096, headTimeout: .seconds(5))) { port in
                let socket = try RawSocket(port: port)
                socket.send("GET / HTTP/1.1\r\nHost: x\r\nX-Padding: " + String(repeating: "a", count: 8000) + "\r\n\r\n")
                #expect(Self.text(socket.readAll()).hasPrefix("HTTP/1.1 431"))
            }
        }

        @Test func slowlorisGets408AndIsDisconnected() async throws {
            try await Self.withEchoServer { port in
                let socket = try RawSocket(port: port)
                socket.send("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: a")
                let reply = Self.text(socket.readAll())
                #expect(reply.hasPrefix("HTTP/1.1 408"))
            }
        }

        @Test func abusedConnectionsReturnFileDescriptorsAndMemoryToBaseline() async throws {
            try await Self.withEchoServer { port in
                // Warm up allocator and event loops first.
                try Self.abuse(port: port, connections: 200)
                try await Task.sleep(for: .seconds(2))
                let fdBaseline = ProcessResources.openFileDescriptors()
                let memoryBaseline = ProcessResources.residentBytes()
                try Self.abuse(port: port, connections: 3000)
                var fds = ProcessResources.openFileDescriptors()
                for _ in 0..<50 where fds > fdBaseline + 2 {
                    try await Task.sleep(for: .milliseconds(100))
                    fds = ProcessResources.openFileDescriptors()
                }
                #expect(fds <= fdBaseline + 2, "file descriptors: \(fdBaseline) before, \(fds) after")
                let memory = ProcessResources.residentBytes()
                #expect(memory < memoryBaseline + 32 << 20, "resident memory: \(memoryBaseline) before, \(memory) after")
            }
        }

        /// Opens `connections` sockets that each misbehave in one of several ways, and closes them.
        static func abuse(port: Int, connections: Int) throws {
            let frames: [[UInt8]] = [
                Array("garbage that is not http\r\n\r\n".utf8),
                Array(upgrade.utf8) + [0x81, 0x05] + Array("Hello".utf8),             // unmasked
                Array(upgrade.utf8) + [0x83, 0x80, 1, 2, 3, 4],                      // reserved opcode
                Array(upgrade.utf8) + [0x82, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], // absurd length
                Array(upgrade.utf8) + [0x81, 0x82, 0, 0, 0, 0, 0xC0, 0x80],          // bad UTF-8
                Array(upgrade.utf8) + [0x01, 0x81, 0, 0, 0, 0, 0x41],                // fragment, then vanish
                Array("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: a".utf8),                // slowloris, then vanish
            ]
            var open: [RawSocket] = []
            for i in 0..<connections {
                let socket = try RawSocket(port: port)
                socket.send(frames[i % frames.count])
                open.append(socket)
                if open.count == 200 { open.removeAll() }
            }
        }
    }

    /// Server timers: keepalive pings on silent connections, the idle timeout, the close timeout.
    @Suite("WebSocket server timers", .serialized)
    struct ServerTimerTests {
        @Test func silentConnectionIsPingedAndIdleOneClosedWith1001() async throws {
            let timeouts = WebSocketTimeouts(closeTimeout: .seconds(1), keepaliveInterval: .milliseconds(300), idleTimeout: .seconds(1))
            try await EchoServerTests.withEchoServer(timeouts: timeouts) { port in
                let socket = try RawSocket(port: port)
                socket.send(EchoServerTests.upgrade)
                _ = socket.read(until: Array("\r\n\r\n".utf8))
                #expect(socket.read(until: [0x89, 0x00]) == [0x89, 0x00], "a ping after 300 ms of silence")
                let rest = socket.readAll()
                #expect(Array(rest.suffix(16)) == [0x88, 0x0E, 0x03, 0xE9] + Array("idle timeout".utf8))
            }
        }

        @Test func peerThatNeverAnswersOurCloseIsDroppedAfterTheCloseTimeout() async throws {
            let timeouts = WebSocketTimeouts(closeTimeout: .milliseconds(500), keepaliveInterval: nil, idleTimeout: .milliseconds(200))
            try await EchoServerTests.withEchoServer(timeouts: timeouts) { port in
                let socket = try RawSocket(port: port)
                socket.send(EchoServerTests.upgrade)
                _ = socket.read(until: Array("\r\n\r\n".utf8))
                let start = ContinuousClock.now
                #expect(socket.peerClosed())
                #expect(ContinuousClock.now - start < .seconds(3))
            }
        }
    }
}
