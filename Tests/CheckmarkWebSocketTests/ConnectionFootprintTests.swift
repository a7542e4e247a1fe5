import CheckmarkWebSocket
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
}
