import CheckmarkWebSocket
import NIOCore
import Testing

/// Every rejection path, with the exact close frame written back (sections 5.1-5.5, 7.4, 8.1).
@Suite("RFC 6455 rejections and close codes")
struct RejectionTests {
    @Test func serverRejectsUnmaskedFrame() {
        let result = drive([0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        #expect(result.events == [.failed(.maskMissing)])
        #expect(result.written == serverClose(1002, "client frame is not masked"))
        #expect(result.state == .closed)
    }

    @Test func clientRejectsMaskedFrame() {
        let result = drive(maskedFrame(0x81, [0x41]), role: .client)
        #expect(result.events == [.failed(.maskUnexpected)])
    }

    @Test(arguments: [UInt8(3), 7, 11, 15])
    func serverRejectsReservedOpcode(opcode: UInt8) {
        let result = drive(maskedFrame(0x80 | opcode, []))
        #expect(result.events == [.failed(.reservedOpcode(opcode))])
        #expect(result.written == serverClose(1002, "reserved opcode \(opcode)"))
    }

    @Test(arguments: [UInt8(0x40), 0x20, 0x10])
    func serverRejectsReservedBitsWithoutExtension(bit: UInt8) {
        #expect(drive(maskedFrame(0x81 | bit, [0x41])).events == [.failed(.reservedBitsSet)])
    }

    @Test func serverRejectsFragmentedControlFrame() {
        #expect(drive(maskedFrame(0x09, [])).events == [.failed(.fragmentedControlFrame)])
    }

    @Test func serverRejectsControlFrameOver125Bytes() {
        // Refused from the header alone: no payload needed.
        let result = drive([0x89, 0xFE, 0x00, 0x7E])
        #expect(result.events == [.failed(.controlFrameTooLarge)])
        #expect(result.written == serverClose(1002, "control frame payload over 125 bytes"))
    }

    @Test func serverRejectsLengthWithMostSignificantBitSet() {
        let result = drive([0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1])
        #expect(result.events == [.failed(.invalidLength)])
    }

    @Test func oversizedFrameIsRefusedFromItsHeaderWith1009() {
        let limits = WebSocketLimits(maxFrameSize: 1024, maxMessageSize: 4096)
        let result = drive([0x82, 0xFE, 0x04, 0x01], limits: limits)
        #expect(result.events == [.failed(.frameTooLarge(limit: 1024))])
        #expect(result.written == serverClose(1009, "frame larger than 1024 bytes"))
    }

    @Test func oversizedMessageIsRefusedWith1009() {
        let limits = WebSocketLimits(maxFrameSize: 100, maxMessageSize: 150)
        let input = maskedFrame(0x02, [UInt8](repeating: 1, count: 100)) + maskedFrame(0x80, [UInt8](repeating: 1, count: 100))
        #expect(drive(input, limits: limits).events == [.failed(.messageTooLarge(limit: 150))])
    }

    @Test func tooManyFragmentsIsRefusedWith1009() {
        let limits = WebSocketLimits(maxFragmentsPerMessage: 3)
        let input = maskedFrame(0x01, [0x41]) + maskedFrame(0x00, [0x41]) + maskedFrame(0x00, [0x41]) + maskedFrame(0x00, [0x41])
        let result = drive(input, limits: limits)
        #expect(result.events == [.failed(.tooManyFragments(limit: 3))])
        #expect(result.written == serverClose(1009, "message in more than 3 fragments"))
    }

    @Test func continuationWithoutStartIsRefusedWith1002() {
        #expect(drive(maskedFrame(0x80, [0x41])).events == [.failed(.unexpectedContinuation)])
    }

    @Test func newMessageDuringFragmentedOneIsRefusedWith1002() {
        let input = maskedFrame(0x01, [0x41]) + maskedFrame(0x81, [0x42])
        #expect(drive(input).events == [.failed(.expectedContinuation)])
    }

    @Test func invalidUTF8FailsAtTheFragmentThatCarriesIt() {
        // The second fragment is bad; the third never needs to arrive.
        let input = maskedFrame(0x01, Array("ok".utf8)) + maskedFrame(0x00, [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0, 0x80])
        let result = drive(input)
        #expect(result.events == [.failed(.invalidUTF8)])
        #expect(result.written == serverClose(1007, "invalid UTF-8"))
    }

    @Test(arguments: [[UInt8(0xC0), 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF], [0xE0, 0x80, 0x80], [0xCE]])
    func invalidUTF8TextIsRefusedWith1007(bytes: [UInt8]) {
        #expect(drive(maskedFrame(0x81, bytes)).events == [.failed(.invalidUTF8)])
    }

    @Test(arguments: [UInt16(0), 999, 1004, 1005, 1006, 1012, 1015, 2999, 5000, 65535])
    func closeWithCodeInvalidOnWireIsRefusedWith1002(code: UInt16) {
        let result = drive(maskedFrame(0x88, [UInt8(code >> 8), UInt8(code & 0xFF)]))
        #expect(result.events == [.failed(.invalidCloseCode(code))])
        #expect(result.written == serverClose(1002, "close code \(code) is not valid on the wire"))
    }

    @Test(arguments: [UInt16(1000), 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 4999])
    func closeWithValidCodeIsEchoed(code: UInt16) {
        let result = drive(maskedFrame(0x88, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array("bye".utf8)))
        #expect(result.events == [.closeReceived(code: WebSocketCloseCode(rawValue: code), reason: "bye")])
        #expect(result.written == serverClose(code))
        #expect(result.state == .closed)
    }

    @Test func closeWithOneBytePayloadIsRefused() {
        #expect(drive(maskedFrame(0x88, [0x03])).events == [.failed(.invalidClosePayloadLength)])
    }

    @Test func closeWithInvalidUTF8ReasonIsRefusedWith1007() {
        #expect(drive(maskedFrame(0x88, [0x03, 0xE8, 0xFF])).events == [.failed(.invalidUTF8)])
    }

    @Test func emptyCloseIsAnsweredWithEmptyClose() {
        let result = drive(maskedFrame(0x88, []))
        #expect(result.events == [.closeReceived(code: nil, reason: "")])
        #expect(result.written == [0x88, 0x00])
    }

    @Test func nothingIsReadAfterTheConnectionFailed() {
        let input = [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F] + maskedFrame(0x81, [0x41])
        #expect(drive(input).events == [.failed(.maskMissing)])
    }

    @Test func messagesThatCrossOurCloseAreStillDelivered() {
        var connection = WebSocketConnection(role: .server)
        connection.close(code: .goingAway, reason: "shutdown")
        #expect(connection.takeOutbound().flatMap(\.bytes) == serverClose(1001, "shutdown"))
        connection.receive(ByteBuffer(bytes: maskedFrame(0x81, [0x41]) + maskedFrame(0x88, [0x03, 0xE9])))
        #expect(connection.nextEvent() == .text(ByteBuffer(string: "A")))
        #expect(connection.nextEvent() == .closeReceived(code: .goingAway, reason: ""))
        #expect(connection.nextEvent() == nil)
        #expect(connection.state == .closed)
        #expect(!connection.hasOutbound, "no second close frame")
        let sent = connection.sendText(ByteBuffer(string: "late"))
        #expect(!sent)
    }

    @Test func closeCodeTableMatchesSection74() {
        for code in UInt16(0)...UInt16(5100) {
            let valid = (1000...1003).contains(code) || (1007...1011).contains(code) || (3000...4999).contains(code)
            #expect(WebSocketCloseCode(rawValue: code).isValidOnWire == valid)
        }
    }
}
