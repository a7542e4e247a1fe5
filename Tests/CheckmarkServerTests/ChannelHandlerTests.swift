import CheckmarkServer
import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore
import NIOEmbedded
import Testing

/// The NIO shell around the codec: batching and flushing.
@Suite("WebSocket channel handler")
struct ChannelHandlerTests {
    /// Counts flushes on their way to the socket.
    final class FlushCounter: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var flushes = 0
        func flush(context: ChannelHandlerContext) {
            flushes += 1
            context.flush()
        }
    }

    static func maskedText(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        let key: [UInt8] = [1, 2, 3, 4]
        return [0x81, 0x80 | UInt8(payload.count)] + key + payload.enumerated().map { $1 ^ key[$0 % 4] }
    }

    @Test func repliesToSeveralFramesOfOneReadAreFlushedOnce() throws {
        let channel = EmbeddedChannel()
        let counter = FlushCounter()
        try channel.pipeline.syncOperations.addHandler(counter)
        try channel.pipeline.syncOperations.addHandler(WebSocketChannelHandler(
            connection: WebSocketConnection(role: .server), application: EchoApplication(),
            timeouts: WebSocketTimeouts(keepaliveInterval: nil, idleTimeout: nil), sessionID: 1))
        try channel.writeInbound(ByteBuffer(bytes: Self.maskedText("one") + Self.maskedText("two") + Self.maskedText("three")))
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 1)
        var replies: [[UInt8]] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            replies.append(Array(buffer.readableBytesView))
        }
        #expect(replies == [[0x81, 3] + Array("one".utf8), [0x81, 3] + Array("two".utf8), [0x81, 5] + Array("three".utf8)])
        _ = try? channel.finish()
    }

    /// Regression: after the first keepalive ping of a silent connection, the next one was scheduled
    /// at a deadline already past, so the server sent pings in a tight loop (found by `checkmark bench`:
    /// 30 s into a broadcast run, every receive-only connection was pinged without pause and fan-out stopped).
    @Test func silentConnectionIsPingedOncePerKeepaliveInterval() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(WebSocketChannelHandler(
            connection: WebSocketConnection(role: .server), application: EchoApplication(),
            timeouts: WebSocketTimeouts(keepaliveInterval: .seconds(30), idleTimeout: nil), sessionID: 1))
        func pings() throws -> Int {
            var count = 0
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
                if buffer.readableBytesView.first == 0x89 { count += 1 }
            }
            return count
        }
        channel.embeddedEventLoop.advanceTime(by: .seconds(29))
        #expect(try pings() == 0)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(try pings() == 1)
        channel.embeddedEventLoop.advanceTime(by: .seconds(29))
        #expect(try pings() == 0, "no second ping within the interval")
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(try pings() == 1)
        // A frame from the peer (its pong) restarts the silence.
        try channel.writeInbound(ByteBuffer(bytes: [0x8A, 0x80, 1, 2, 3, 4]))
        channel.embeddedEventLoop.advanceTime(by: .seconds(29))
        #expect(try pings() == 0)
        _ = try? channel.finish()
    }

    /// The keepalive and the idle timeout share one timer per connection: pings keep coming while the
    /// peer is silent, a frame from the peer restarts both clocks, and the idle timeout closes with 1001.
    @Test func oneTimerPingsASilentConnectionAndClosesItAtTheIdleTimeout() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(WebSocketChannelHandler(
            connection: WebSocketConnection(role: .server), application: EchoApplication(),
            timeouts: WebSocketTimeouts(keepaliveInterval: .seconds(30), idleTimeout: .seconds(100)), sessionID: 1))
        func frames() throws -> (pings: Int, closes: [[UInt8]]) {
            var pings = 0
            var closes: [[UInt8]] = []
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
                switch buffer.readableBytesView.first {
                case 0x89: pings += 1
                case 0x88: closes.append(Array(buffer.readableBytesView))
                default: break
                }
            }
            return (pings, closes)
        }
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(try frames().pings == 2)
        // The peer speaks at 60 s: the next ping is due at 90 s, the idle timeout at 160 s.
        try channel.writeInbound(ByteBuffer(bytes: [0x8A, 0x80, 1, 2, 3, 4]))
        channel.embeddedEventLoop.advanceTime(by: .seconds(29))
        #expect(try frames().pings == 0)
        channel.embeddedEventLoop.advanceTime(by: .seconds(70))
        let beforeIdle = try frames()
        #expect(beforeIdle.pings == 3 && beforeIdle.closes.isEmpty, "pings at 90, 120 and 150 s")
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        let atIdle = try frames()
        #expect(atIdle.pings == 0)
        #expect(atIdle.closes == [[0x88, 0x0E, 0x03, 0xE9] + Array("idle timeout".utf8)])
        _ = try? channel.finish()
    }

    /// An application that keeps its session, as the gateway's connections do.
    final class SessionKeeper: WebSocketApplication {
        var session: WebSocketSession?
        func connected(_ session: WebSocketSession) { self.session = session }
        func received(_ message: WebSocketMessage, on session: WebSocketSession) {}
        func disconnected(_ session: WebSocketSession, code: WebSocketCloseCode?) {}
    }

    /// The session holds its handler strongly (no weak load per fanned-out frame), which makes a cycle
    /// handler → application → session → handler: leaving the pipeline must break it, or every closed
    /// connection would stay in memory with its timers and buffers.
    @Test func aClosedConnectionLeavesNoHandlerSessionOrApplicationBehind() throws {
        weak var handler: WebSocketChannelHandler?
        weak var session: WebSocketSession?
        weak var application: SessionKeeper?
        try {
            let channel = EmbeddedChannel()
            let keeper = SessionKeeper()
            let added = WebSocketChannelHandler(
                connection: WebSocketConnection(role: .server), application: keeper,
                timeouts: WebSocketTimeouts(keepaliveInterval: .seconds(30), idleTimeout: .seconds(100)), sessionID: 1)
            try channel.pipeline.syncOperations.addHandler(added)
            try channel.writeInbound(ByteBuffer(bytes: Self.maskedText("hello")))
            (handler, session, application) = (added, keeper.session, keeper)
            #expect(session != nil)
            _ = try? channel.finish()
        }()
        #expect(handler == nil)
        #expect(session == nil)
        #expect(application == nil)
    }
}
