import CheckmarkWebSocket
import NIOCore
import Testing

/// What every open connection holds inline, idle or not: the codec's state. Its fields are ordered
/// so that narrow ones share padding; these bounds catch a field added or moved where it costs
/// every connection another word.
@Suite("Connection footprint")
struct ConnectionFootprintTests {
    @Test func aFrameParserPacksItsFlagsIntoOnePaddedWord() {
        #expect(MemoryLayout<FrameParser>.size <= 56, "\(MemoryLayout<FrameParser>.size) bytes (71 before the packing)")
    }

    @Test func aConnectionsCodecStateStaysWithinItsBudget() {
        #expect(MemoryLayout<WebSocketConnection>.size <= 160, "\(MemoryLayout<WebSocketConnection>.size) bytes (176 before the packing)")
    }

    /// A connection whose transport is gone may still be kept (by a session an application holds):
    /// released, it holds no frames and takes none, whatever it had queued or compressed.
    @Test func aReleasedConnectionHoldsNoFramesAndTakesNoMore() {
        var connection = WebSocketConnection(role: .server, compression: PerMessageDeflateParameters())
        let queued = connection.sendText(ByteBuffer(string: String(repeating: "compress me ", count: 100)))
        let shared = connection.sendEncodedFrame(ByteBuffer(bytes: [0x81, 0x01, 0x61]))
        #expect(queued && shared && connection.outboundFrameCount == 2)
        connection.release()
        #expect(connection.state == .closed)
        #expect(!connection.hasOutbound && connection.outboundByteCount == 0)
        let text = connection.sendText(ByteBuffer(string: "after"))
        let frame = connection.sendEncodedFrame(ByteBuffer(bytes: [0x81, 0x01, 0x61]))
        #expect(!text && !frame && !connection.hasOutbound)
    }
}
