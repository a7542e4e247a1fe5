import CheckmarkWebSocket
import NIOCore
import Testing

/// RFC 7692: negotiation and compressed messages.
@Suite("RFC 7692 permessage-deflate")
struct PerMessageDeflateTests {
    static func offers(_ header: String) -> [ExtensionHeader] { ExtensionHeader.parse([header])! }

    @Test func defaultOfferIsAcceptedWithNoParameters() {
        let agreed = PerMessageDeflateConfiguration().accept(offers: Self.offers("permessage-deflate; client_max_window_bits"))
        #expect(agreed == PerMessageDeflateParameters())
        #expect(agreed?.responseHeader.headerValue == "permessage-deflate")
    }

    @Test func requestedParametersAreAnswered() {
        let agreed = PerMessageDeflateConfiguration().accept(offers: Self.offers(
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10"))
        #expect(agreed?.responseHeader.headerValue == "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10")
    }

    @Test func firstAcceptableOfferWinsAndBrokenOnesAreDeclined() {
        let agreed = PerMessageDeflateConfiguration().accept(offers: Self.offers(
            "permessage-deflate; unknown_param, permessage-deflate; server_max_window_bits=16, permessage-deflate; server_max_window_bits=09, x-other, permessage-deflate; server_max_window_bits=\"12\""))
        #expect(agreed?.serverMaxWindowBits == 12)
    }

    @Test func repeatedParameterDeclinesTheOffer() {
        #expect(PerMessageDeflateConfiguration().accept(offers: Self.offers("permessage-deflate; server_no_context_takeover; server_no_context_takeover")) == nil)
    }

    @Test func sharedFrameModeAddsServerNoContextTakeover() {
        let configuration = PerMessageDeflateConfiguration(noContextTakeover: true)
        #expect(configuration.accept(offers: Self.offers("permessage-deflate"))?.serverNoContextTakeover == true)
    }

    @Test func helloFromRFC7692Section7231IsInflated() {
        // "Hello" compressed in one frame (section 7.2.3.1), masked as a client sends it.
        let input = maskedFrame(0xC1, [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
        #expect(drive(input, compression: PerMessageDeflateParameters()).events == [.text(ByteBuffer(string: "Hello"))])
    }

    @Test func compressedMessageInFragmentsFromSection7232() {
        let input = maskedFrame(0x41, [0xF2, 0x48, 0xCD]) + maskedFrame(0x80, [0xC9, 0xC9, 0x07, 0x00])
        #expect(drive(input, compression: PerMessageDeflateParameters()).events == [.text(ByteBuffer(string: "Hello"))])
    }

    @Test func rsv1OnContinuationIsRefused() {
        let input = maskedFrame(0x41, [0xF2, 0x48, 0xCD]) + maskedFrame(0xC0, [0xC9, 0xC9, 0x07, 0x00])
        #expect(drive(input, compression: PerMessageDeflateParameters()).events == [.failed(.reservedBitsSet)])
    }

    @Test func corruptCompressedDataIsRefusedWith1007() {
        let result = drive(maskedFrame(0xC2, [0xFF, 0xFF, 0xFF, 0xFF]), compression: PerMessageDeflateParameters())
        #expect(result.events == [.failed(.invalidCompressedData)])
        #expect(result.written == serverClose(1007, "compressed data could not be inflated"))
    }

    @Test func decompressionBombStopsAtTheMessageLimit() {
        let deflater = Deflater()
        let bomb = deflater.compressMessage(ByteBuffer(bytes: [UInt8](repeating: 0, count: 1 << 20)))
        #expect(bomb.readableBytes < 2048)
        let limits = WebSocketLimits(maxFrameSize: 1 << 20, maxMessageSize: 64 * 1024)
        let result = drive(maskedFrame(0xC2, bomb.bytes), limits: limits, compression: PerMessageDeflateParameters())
        #expect(result.events == [.failed(.messageTooLarge(limit: 64 * 1024))])
    }

    @Test(arguments: [8, 9, 12, 15])
    func roundTripAtEveryWindowSize(bits: Int) {
        let text = String(repeating: "checkmark ✓✓ read by everyone; ", count: 200)
        let deflater = Deflater(windowBits: bits, noContextTakeover: false)
        let inflater = Inflater()
        for _ in 0..<3 {
            let compressed = deflater.compressMessage(ByteBuffer(string: text))
            var out = ByteBuffer()
            #expect(throws: Never.self) {
                try inflater.inflate(compressed, into: &out, limit: 1 << 20)
                try inflater.finishMessage(into: &out, limit: 1 << 20)
            }
            #expect(String(buffer: out) == text)
            // An 8-bit window deflates with run-length matches only (zlib has no 256-byte window), so it
            // gets Huffman coding but not the 4x of real back-references.
            #expect(compressed.readableBytes < text.utf8.count / (bits == 8 ? 1 : 4))
        }
    }

    /// Regression: every deflater had zlib's default 32,768-entry hash table, which zlib rescans
    /// whenever the window slides: behind a 512-byte window (a peer's `server_max_window_bits=9`)
    /// that is every 250 bytes of input, and Autobahn's 128 KiB messages of cases 12 and 13 took
    /// seconds each. The table now has as many entries as the window has bytes.
    @Test(arguments: [8, 9, 10, 12, 15])
    func aDeflatersHashTableIsNoLargerThanItsWindow(bits: Int) {
        let deflater = Deflater(windowBits: bits)
        let windowBytes = 1 << max(bits, 9)
        #expect(1 << (deflater.memoryLevel + 7) == windowBytes)
        if bits == 15 { #expect(deflater.memoryLevel == 8, "zlib's default at its default window") }
    }

    @Test(arguments: [8, 9, 10, 12, 15])
    func deflaterStaysWithinTheAgreedWindow(bits: Int) throws {
        // Repeats about 420 bytes apart and a long repeat of the opening: a deflater with a larger
        // window than agreed would refer back further than the peer keeps.
        let text = (0..<60).map { "line \($0 % 7) of a chat transcript, read by \($0 % 3) members!!!!!!!! " }.joined()
        let compressed = Deflater(windowBits: bits).compressMessage(ByteBuffer(string: text))
        let walk = try DeflateStreamWalker.walk(compressed.bytes + [0x00, 0x00, 0xFF, 0xFF])
        #expect(String(decoding: walk.output, as: UTF8.self) == text)
        #expect(walk.longestDistance <= 1 << bits, "distance \(walk.longestDistance) in a \(1 << bits)-byte window")
        #expect(walk.longestDistance > 0, "the text has repeats to refer back to")
    }

    @Test(arguments: [
        ("permessage-deflate", true),
        ("permessage-deflate; server_max_window_bits=10; client_max_window_bits=12", true),
        ("permessage-deflate; client_max_window_bits", false),
        ("permessage-deflate; client_max_window_bits=15", false),
        ("permessage-deflate; server_max_window_bits", false),
        ("permessage-deflate; mystery", false),
        ("x-webkit-deflate-frame", false),
    ])
    func clientChecksTheServersAnswer(response: String, acceptable: Bool) {
        let client = PerMessageDeflateConfiguration(maxWindowBits: 12)
        let agreed = client.validate(response: Self.offers(response)[0])
        #expect((agreed != nil) == acceptable)
        if response.contains("=10") { #expect(agreed?.serverMaxWindowBits == 10 && agreed?.clientMaxWindowBits == 12) }
    }

    @Test func eightBitWindowIsAnsweredAsAskedNotWithNine() {
        // RFC 7692 section 7.1.2.1: the response may not exceed the offered server_max_window_bits.
        let agreed = PerMessageDeflateConfiguration().accept(offers: Self.offers("permessage-deflate; server_max_window_bits=8"))
        #expect(agreed?.responseHeader.headerValue == "permessage-deflate; server_max_window_bits=8")
    }

    @Test func serverCompressesAboveTheThresholdOnly() {
        var connection = WebSocketConnection(
            role: .server, compression: PerMessageDeflateParameters(),
            compressionConfiguration: PerMessageDeflateConfiguration(compressionThreshold: 10))
        connection.sendText(ByteBuffer(string: "short"))
        connection.sendText(ByteBuffer(string: String(repeating: "long ", count: 20)))
        let frames = connection.takeOutbound()
        #expect(frames[0].bytes.first == 0x81)
        #expect(frames[1].bytes.first == 0xC1)
    }

    @Test func framesWithoutContextTakeoverAreIdenticalForEveryConnection() {
        let payload = ByteBuffer(string: String(repeating: "{\"type\":\"message.new\"}", count: 10))
        var outputs: [[UInt8]] = []
        for _ in 0..<3 {
            var connection = WebSocketConnection(
                role: .server, compression: PerMessageDeflateParameters(serverNoContextTakeover: true))
            #expect(connection.canShareCompressedFrames)
            connection.sendText(payload)
            connection.sendText(payload)
            let frames = connection.takeOutbound().map(\.bytes)
            #expect(frames[0] == frames[1])
            outputs.append(frames[0])
        }
        #expect(Set(outputs).count == 1)
    }
}

/// One compressed frame shared by every recipient of a fan-out.
@Suite("RFC 7692 shared frames for fan-out")
struct SharedFrameTests {
    @Test func sharedCompressedFrameIsWhatEachConnectionWouldHaveSentAndClientsInflateIt() throws {
        let payload = ByteBuffer(string: String(repeating: #"{"type":"message.read","user":{"id":"ana"}}"#, count: 8))
        let encoder = SharedFrameEncoder(configuration: PerMessageDeflateConfiguration(noContextTakeover: true))
        let frames = encoder.encode(payload, windowBits: [15, 10])
        var sharing = WebSocketConnection(role: .server, compression: PerMessageDeflateParameters(serverNoContextTakeover: true))
        var notSharing = WebSocketConnection(role: .server, compression: PerMessageDeflateParameters())
        var plainOnly = WebSocketConnection(role: .server)
        #expect(frames.frame(for: sharing) == frames.compressed[15])
        #expect(frames.frame(for: notSharing) == frames.plain)
        #expect(frames.frame(for: plainOnly) == frames.plain)
        // The shared bytes equal what the connection would have produced itself.
        sharing.sendText(payload)
        #expect(sharing.takeOutbound() == [frames.compressed[15]!])
        notSharing.sendText(payload)
        plainOnly.sendText(payload)
        // A client inflates the shared frame, twice in a row (no context carried between messages).
        var client = WebSocketConnection(
            role: .client, compression: PerMessageDeflateParameters(serverNoContextTakeover: true),
            maskingKeys: { WebSocketMaskingKey(7) })
        client.receive(frames.compressed[15]!)
        client.receive(frames.compressed[15]!)
        #expect(client.nextEvent() == .text(payload))
        #expect(client.nextEvent() == .text(payload))
        var smallWindow = WebSocketConnection(
            role: .client, compression: PerMessageDeflateParameters(serverNoContextTakeover: true, serverMaxWindowBits: 10),
            maskingKeys: { WebSocketMaskingKey(7) })
        smallWindow.receive(frames.compressed[10]!)
        #expect(smallWindow.nextEvent() == .text(payload))
    }

    @Test func smallPayloadsAreNotCompressed() {
        let encoder = SharedFrameEncoder(configuration: PerMessageDeflateConfiguration(compressionThreshold: 100))
        #expect(encoder.encode(ByteBuffer(string: "short")).compressed.isEmpty)
    }
}
