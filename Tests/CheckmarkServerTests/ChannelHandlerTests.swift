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
            timeouts: WebSocketTimeouts(keepaliveInterval: nil, idleTimeout: nil)))
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
            timeouts: WebSocketTimeouts(keepaliveInterval: .seconds(30), idleTimeout: nil)))
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
            timeouts: WebSocketTimeouts(keepaliveInterval: .seconds(30), idleTimeout: .seconds(100))))
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

    /// Counts writes and flushes on their way to the socket.
    final class WriteCounter: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var writes = 0
        var flushes = 0
        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            writes += 1
            context.write(data, promise: promise)
        }
        func flush(context: ChannelHandlerContext) {
            flushes += 1
            context.flush()
        }
    }

    /// A server connection without timers, its writes and flushes counted, and its session.
    static func serverWithWriteCounter() throws -> (EmbeddedChannel, WriteCounter, WebSocketSession) {
        let channel = EmbeddedChannel()
        let counter = WriteCounter()
        let keeper = SessionKeeper()
        try channel.pipeline.syncOperations.addHandler(counter)
        try channel.pipeline.syncOperations.addHandler(WebSocketChannelHandler(
            connection: WebSocketConnection(role: .server), application: keeper,
            timeouts: WebSocketTimeouts(keepaliveInterval: nil, idleTimeout: nil)))
        return (channel, counter, try #require(keeper.session))
    }

    static func serverText(_ text: String) -> ByteBuffer {
        ByteBuffer(bytes: [0x81, UInt8(text.utf8.count)] + Array(text.utf8))
    }

    /// A connection that gets several events in one tick (a fan-out batch) costs one channel write and
    /// one flush, not one per event, and the frames keep their order.
    @Test func sharedFramesOfOneTickGoToTheChannelAsOneWrite() throws {
        let (channel, counter, session) = try Self.serverWithWriteCounter()
        for text in ["one", "two", "three"] { #expect(session.send(encodedFrame: Self.serverText(text))) }
        #expect(counter.writes == 0, "held until the end of the tick")
        channel.embeddedEventLoop.run()
        #expect(counter.writes == 1)
        #expect(counter.flushes == 1)
        let written = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(Array(written.readableBytesView) == ["one", "two", "three"].flatMap { Array(Self.serverText($0).readableBytesView) })
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        _ = try? channel.finish()
    }

    /// Held frames never pile up past ``WebSocketSession/maxHeldBytes`` within a tick: reaching it hands
    /// them to the channel at once, where the socket's writability (the slow-consumer rule) sees them.
    @Test func sharedFramesReachingTheHeldLimitGoToTheChannelAtOnce() throws {
        let (channel, counter, session) = try Self.serverWithWriteCounter()
        let payload = [UInt8](repeating: 0x61, count: 1_000)
        let frame = ByteBuffer(bytes: [0x81, 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload)
        let framesBelowLimit = (WebSocketSession.maxHeldBytes - 1) / frame.readableBytes
        for _ in 0..<framesBelowLimit { session.send(encodedFrame: frame) }
        #expect(counter.writes == 0)
        #expect(session.bufferedOutboundBytes == framesBelowLimit * frame.readableBytes,
                "held frames count against the outbound limit before they reach the socket")
        session.send(encodedFrame: frame)
        #expect(counter.writes > 0, "written to the channel before the end of the tick")
        channel.embeddedEventLoop.run()
        var bytes = 0
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readableBytes }
        #expect(bytes == (framesBelowLimit + 1) * frame.readableBytes)
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
    @Test func aClosedConnectionLeavesNoHandlerOrApplicationBehind() throws {
        weak var handler: WebSocketChannelHandler?
        weak var application: SessionKeeper?
        try {
            let channel = EmbeddedChannel()
            let keeper = SessionKeeper()
            let added = WebSocketChannelHandler(
                connection: WebSocketConnection(role: .server), application: keeper,
                timeouts: WebSocketTimeouts(keepaliveInterval: .seconds(30), idleTimeout: .seconds(100)))
            try channel.pipeline.syncOperations.addHandler(added)
            try channel.writeInbound(ByteBuffer(bytes: Self.maskedText("hello")))
            (handler, application) = (added, keeper)
            #expect(keeper.session != nil)
            _ = try? channel.finish()
        }()
        #expect(handler == nil)
        #expect(application == nil)
    }

    /// An application may keep its session after the connection is gone (the gateway's answers arrive
    /// later): the session then sends nothing, reports nothing buffered and closes nothing, as
    /// ``WebSocketSession`` promises.
    @Test func aSessionKeptAfterItsConnectionLeftSendsNothing() throws {
        let channel = EmbeddedChannel()
        let keeper = SessionKeeper()
        try channel.pipeline.syncOperations.addHandler(WebSocketChannelHandler(
            connection: WebSocketConnection(role: .server), application: keeper,
            timeouts: WebSocketTimeouts(keepaliveInterval: nil, idleTimeout: nil)))
        let session = try #require(keeper.session)
        #expect(session.send(text: ByteBuffer(string: "before")))
        _ = try? channel.finish()
        #expect(!session.send(text: ByteBuffer(string: "after")))
        #expect(!session.send(encodedFrame: ByteBuffer(bytes: [0x81, 0x01, 0x61])))
        #expect(session.bufferedOutboundBytes == 0)
        #expect(!session.isWritable)
        session.close(code: .normalClosure)
    }

    /// The same when the handler leaves a pipeline whose channel stays open (no end of transport
    /// closed the codec): leaving releases the codec state, so nothing is queued for a socket that
    /// will never be written again.
    @Test func aSessionWhoseHandlerLeftALiveChannelSendsNothing() throws {
        let channel = EmbeddedChannel()
        let keeper = SessionKeeper()
        let handler = WebSocketChannelHandler(
            connection: WebSocketConnection(role: .server), application: keeper,
            timeouts: WebSocketTimeouts(keepaliveInterval: nil, idleTimeout: nil))
        try channel.pipeline.syncOperations.addHandler(handler)
        let session = try #require(keeper.session)
        let removed = channel.pipeline.syncOperations.removeHandler(handler)
        channel.embeddedEventLoop.run()
        try removed.wait()
        // The channel saw no end of transport: no channelInactive, no inputClosed, no error.
        #expect(!session.send(text: ByteBuffer(string: "after")))
        #expect(!session.send(encodedFrame: ByteBuffer(bytes: [0x81, 0x01, 0x61])))
        #expect(session.bufferedOutboundBytes == 0)
        _ = try? channel.finish()
    }
}
