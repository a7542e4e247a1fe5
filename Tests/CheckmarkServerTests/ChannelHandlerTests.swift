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
}
