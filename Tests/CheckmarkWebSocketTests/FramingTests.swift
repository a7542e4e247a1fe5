import CheckmarkWebSocket
import NIOCore
import Testing

/// RFC 6455 section 5.2 and 5.7: framing, with the section 5.7 examples as literal bytes.
@Suite("RFC 6455 §5.2, §5.7 framing")
struct FramingTests {
    @Test func clientReceivesUnmaskedHelloFromSection57() {
        let result = drive([0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F], role: .client)
        #expect(result.events == [.text(ByteBuffer(string: "Hello"))])
    }

    @Test func serverReceivesMaskedHelloFromSection57() {
        let result = drive([0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
        #expect(result.events == [.text(ByteBuffer(string: "Hello"))])
        #expect(result.written.isEmpty)
    }

    @Test func fragmentedHelloFromSection57IsReassembled() {
        let input = maskedFrame(0x01, Array("Hel".utf8)) + maskedFrame(0x80, Array("lo".utf8))
        #expect(drive(input).events == [.text(ByteBuffer(string: "Hello"))])
    }

    @Test func pingFromSection57IsAnsweredWithPong() {
        let result = drive(maskedFrame(0x89, Array("Hello".utf8)))
        #expect(result.events == [.ping(ByteBuffer(string: "Hello"))])
        #expect(result.written == [0x8A, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
    }

    @Test(arguments: [256, 65_536])
    func extendedLengthsFromSection57(length: Int) {
        let payload = [UInt8](repeating: 0x2A, count: length)
        let result = drive(maskedFrame(0x82, payload))
        #expect(result.events == [.binary(ByteBuffer(bytes: payload))])
        let encoded = FrameEncoder.encode(WebSocketFrame(opcode: .binary, payload: ByteBuffer(bytes: payload)), maskingKey: nil)
        let header: [UInt8] = length == 256 ? [0x82, 0x7E, 0x01, 0x00] : [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0]
        #expect(Array(encoded.bytes.prefix(header.count)) == header)
    }

    @Test func inputOneByteAtATimeGivesTheSameEventsAsAllAtOnce() {
        var input: [UInt8] = []
        input += maskedFrame(0x01, Array("frag".utf8))
        input += maskedFrame(0x89, Array("p".utf8))
        input += maskedFrame(0x80, Array("mented ✓".utf8))
        input += maskedFrame(0x82, [UInt8](repeating: 7, count: 300))
        input += maskedFrame(0x88, [0x03, 0xE8])
        let whole = drive(input)
        let dripped = drive(input, chunk: 1)
        #expect(whole.events == dripped.events)
        #expect(whole.written == dripped.written)
        #expect(whole.events.count == 4)
    }

    @Test func maskingWorksAtEveryOffsetAndLength() {
        let key = WebSocketMaskingKey(0x37, 0xFA, 0x21, 0x3D)
        for length in 0..<40 {
            for offset in 0..<4 {
                let original = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
                var buffer = ByteBuffer(bytes: original)
                key.apply(to: &buffer, offset: offset)
                let expected = original.enumerated().map { $1 ^ [0x37, 0xFA, 0x21, 0x3D][($0 + offset) % 4] }
                #expect(buffer.bytes == expected)
            }
        }
    }

    @Test func encoderMasksClientFrames() {
        let frame = FrameEncoder.encode(WebSocketFrame(opcode: .text, payload: ByteBuffer(string: "Hello")),
                                        maskingKey: WebSocketMaskingKey(0x37, 0xFA, 0x21, 0x3D))
        #expect(frame.bytes == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }
}
