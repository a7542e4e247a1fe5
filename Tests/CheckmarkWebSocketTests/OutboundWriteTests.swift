import CheckmarkWebSocket
import NIOCore
import Testing

/// How a connection's waiting frames become writes (`takeOutboundWrite(coalescingUpTo:)`): the
/// frames in order, as few writes as the limit allows, and nothing left behind.
@Suite("Outbound frames as writes")
struct OutboundWriteTests {
    private func frame(_ byte: UInt8, length: Int) -> ByteBuffer {
        var bytes = [UInt8](repeating: byte, count: length)
        bytes[0] = 0x81
        return ByteBuffer(bytes: bytes)
    }

    @Test func nothingWaitingIsNoWrite() {
        var connection = WebSocketConnection(role: .server)
        #expect(connection.takeOutboundWrite(coalescingUpTo: 1_024) == .none)
    }

    @Test func oneFrameIsWrittenAsItIs() {
        var connection = WebSocketConnection(role: .server)
        let shared = frame(1, length: 40)
        connection.sendEncodedFrame(shared)
        guard case .single(let bytes) = connection.takeOutboundWrite(coalescingUpTo: 16) else {
            Issue.record("one frame is one write")
            return
        }
        #expect(bytes == shared)
        // The frame encoded once for many recipients is handed on, not copied.
        #expect(bytes.withUnsafeReadableBytes { $0.baseAddress } == shared.withUnsafeReadableBytes { $0.baseAddress })
        #expect(!connection.hasOutbound && connection.outboundByteCount == 0)
    }

    @Test func smallFramesWithinTheLimitBecomeOneWriteInOrder() {
        var connection = WebSocketConnection(role: .server)
        let frames = [frame(1, length: 10), frame(2, length: 20), frame(3, length: 30)]
        for f in frames { connection.sendEncodedFrame(f) }
        #expect(connection.takeOutboundWrite(coalescingUpTo: 60) == .single(ByteBuffer(bytes: frames.flatMap(\.readableBytesView))))
        #expect(!connection.hasOutbound && connection.outboundFrameCount == 0 && connection.outboundByteCount == 0)
        #expect(connection.takeOutboundWrite(coalescingUpTo: 60) == .none)
    }

    @Test func framesOverTheLimitAreWrittenOneByOneInOrder() {
        var connection = WebSocketConnection(role: .server)
        let frames = [frame(1, length: 10), frame(2, length: 20), frame(3, length: 31)]
        for f in frames { connection.sendEncodedFrame(f) }
        #expect(connection.takeOutboundWrite(coalescingUpTo: 60) == .frames(frames))
        #expect(!connection.hasOutbound && connection.outboundByteCount == 0)
    }

    @Test func framesQueuedAfterATakeStartANewWrite() {
        var connection = WebSocketConnection(role: .server)
        connection.sendEncodedFrame(frame(1, length: 10))
        _ = connection.takeOutboundWrite(coalescingUpTo: 60)
        let later = frame(2, length: 12)
        connection.sendEncodedFrame(later)
        #expect(connection.takeOutboundWrite(coalescingUpTo: 60) == .single(later))
    }
}
