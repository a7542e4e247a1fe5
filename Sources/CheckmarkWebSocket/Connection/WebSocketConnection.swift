import NIOCore

/// One WebSocket connection as a Sans-I/O state machine (RFC 6455 sections 5-7, RFC 7692): bytes in
/// through ``receive(_:)``, events out through ``nextEvent()``, bytes to write through
/// ``drainOutbound(_:)``. It never touches a socket or a clock.
///
/// Pings are answered, close frames echoed and protocol errors turned into the close frame of their
/// code (``WebSocketCloseCode/init(error:)``) by the machine itself. The transport may be closed once
/// ``state`` is ``State/closed`` and the outbound bytes are written (servers close first, section 7.1.1).
///
/// Holds zlib streams by reference: use one value in place, never copies of it.
public struct WebSocketConnection {
    public enum State: Sendable, Hashable {
        /// Messages flow both ways.
        case open
        /// We sent a close frame and wait for the peer's; its messages until then are still delivered.
        case closeSent
        /// The close handshake is over (or the connection failed): nothing more is sent or read.
        case closed
    }

    /// A message being reassembled from fragments.
    private struct PartialMessage {
        var opcode: WebSocketOpcode
        var compressed: Bool
        var fragments: Int
        var data: ByteBuffer
        var validator: UTF8Validator?
    }

    /// What this connection has in common with the others of its endpoint.
    public let settings: WebSocketConnectionSettings
    /// The negotiated permessage-deflate parameters, nil when not in use.
    public let compression: PerMessageDeflateParameters?
    public var role: WebSocketRole { settings.role }
    public var limits: WebSocketLimits { settings.limits }
    private var compressionConfiguration: PerMessageDeflateConfiguration { settings.compressionConfiguration }
    private var allocator: ByteBufferAllocator { settings.allocator }

    private var parser: FrameParser
    /// A fragmented message being reassembled, on the heap: most connections never fragment, and an
    /// idle one should not carry the space inline.
    private indirect enum Reassembly {
        case message(PartialMessage)
    }
    private var reassembly: Reassembly?
    private var partial: PartialMessage? {
        get {
            guard case .message(let message)? = reassembly else { return nil }
            return message
        }
        set { reassembly = newValue.map { .message($0) } }
    }
    private var inflater: Inflater?
    private var deflater: Deflater?
    /// The oldest frame waiting for the transport, and those after it: a connection that gets one
    /// frame at a time (and an idle one) needs no array.
    private var firstOutbound: ByteBuffer?
    private var moreOutbound: [ByteBuffer] = []
    /// Bytes in `firstOutbound` and `moreOutbound`.
    private var outboundBytes = 0
    // Last: a one-byte field after the wide ones takes no padding.
    public private(set) var state: State = .open

    /// A connection with settings of its own.
    /// - Parameters:
    ///   - role: server or client; a client must pass `maskingKeys`, a source of fresh random keys.
    ///   - compression: parameters agreed in the handshake, or nil.
    ///   - compressionConfiguration: local settings (threshold, level, window) for sending.
    public init(
        role: WebSocketRole, limits: WebSocketLimits = .default,
        compression: PerMessageDeflateParameters? = nil,
        compressionConfiguration: PerMessageDeflateConfiguration = .init(),
        allocator: ByteBufferAllocator = .init(),
        maskingKeys: (@Sendable () -> WebSocketMaskingKey)? = nil
    ) {
        self.init(
            settings: WebSocketConnectionSettings(
                role: role, limits: limits, compressionConfiguration: compressionConfiguration,
                allocator: allocator, maskingKeys: maskingKeys),
            compression: compression)
    }

    /// A connection sharing `settings` with the other connections of its endpoint.
    /// - Parameter compression: parameters agreed in the handshake, or nil.
    public init(settings: WebSocketConnectionSettings, compression: PerMessageDeflateParameters? = nil) {
        self.settings = settings
        self.compression = compression
        self.parser = FrameParser(role: settings.role, maxFrameSize: settings.limits.maxFrameSize, allowsRSV1: compression != nil)
    }

    // MARK: Receiving

    /// Adds bytes read from the transport. Ignored once the connection is closed.
    public mutating func receive(_ bytes: ByteBuffer) {
        guard state != .closed else { return }
        parser.append(bytes)
    }

    /// The next event from the bytes received so far, or nil when more bytes are needed.
    public mutating func nextEvent() -> WebSocketEvent? {
        while state != .closed {
            let frame: WebSocketFrame
            do {
                guard let next = try parser.nextFrame() else { return nil }
                frame = next
            } catch {
                return fail(error)
            }
            if let event = handle(frame) { return event }
        }
        return nil
    }

    private mutating func handle(_ frame: WebSocketFrame) -> WebSocketEvent? {
        switch frame.opcode {
        case .ping:
            if state == .open { queue(opcode: .pong, payload: frame.payload) }
            return .ping(frame.payload)
        case .pong:
            return .pong(frame.payload)
        case .close:
            return handleClose(frame.payload)
        case .text, .binary, .continuation:
            do {
                return try handleData(frame)
            } catch {
                return fail(error)
            }
        }
    }

    /// Section 5.5.1 and 7.1.5: validate, echo the code if we did not start the close, and finish.
    private mutating func handleClose(_ payload: ByteBuffer) -> WebSocketEvent {
        var payload = payload
        var code: WebSocketCloseCode?
        var reason = ""
        switch payload.readableBytes {
        case 0:
            break
        case 1:
            return fail(.invalidClosePayloadLength)
        default:
            let value = WebSocketCloseCode(rawValue: payload.readInteger(as: UInt16.self)!)
            guard value.isValidOnWire else { return fail(.invalidCloseCode(value.rawValue)) }
            let valid = payload.withUnsafeReadableBytes { UTF8Validator.isValid($0) }
            guard valid else { return fail(.invalidUTF8) }
            code = value
            reason = payload.readString(length: payload.readableBytes) ?? ""
        }
        if state == .open {
            queue(opcode: .close, payload: FrameEncoder.closePayload(code: code, reason: ""))
        }
        state = .closed
        partial = nil
        return .closeReceived(code: code, reason: reason)
    }

    /// Sections 5.4 and 5.6: reassembly, decompression, UTF-8 validation that fails at the first bad byte.
    private mutating func handleData(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> WebSocketEvent? {
        var message: PartialMessage
        if frame.opcode == .continuation {
            guard var current = partial else { throw .unexpectedContinuation }
            if frame.rsv1 { throw .reservedBitsSet }  // RSV1 marks only the first frame (RFC 7692 section 6.1)
            current.fragments += 1
            if current.fragments > limits.maxFragmentsPerMessage {
                throw .tooManyFragments(limit: limits.maxFragmentsPerMessage)
            }
            message = current
            partial = nil
        } else {
            guard partial == nil else { throw .expectedContinuation }
            let compressed = frame.rsv1
            // Fast path: a whole uncompressed message in one frame is delivered without a copy.
            if frame.fin && !compressed {
                if frame.opcode == .text {
                    let valid = frame.payload.withUnsafeReadableBytes { UTF8Validator.isValid($0) }
                    guard valid else { throw .invalidUTF8 }
                }
                if frame.payload.readableBytes > limits.maxMessageSize {
                    throw .messageTooLarge(limit: limits.maxMessageSize)
                }
                return frame.opcode == .text ? .text(frame.payload) : .binary(frame.payload)
            }
            message = PartialMessage(
                opcode: frame.opcode, compressed: compressed, fragments: 1,
                data: allocator.buffer(capacity: compressed ? frame.payload.readableBytes * 2 : frame.payload.readableBytes),
                validator: frame.opcode == .text ? UTF8Validator() : nil)
        }

        let before = message.data.writerIndex
        if message.compressed {
            let inflater = self.inflater ?? Inflater()
            self.inflater = inflater
            try inflater.inflate(frame.payload, into: &message.data, limit: limits.maxMessageSize)
            if frame.fin {
                try inflater.finishMessage(into: &message.data, limit: limits.maxMessageSize)
                if compression?.receivesWithoutContextTakeover(as: role) == true { inflater.reset() }
            }
        } else {
            guard message.data.readableBytes + frame.payload.readableBytes <= limits.maxMessageSize else {
                throw .messageTooLarge(limit: limits.maxMessageSize)
            }
            var payload = frame.payload
            message.data.writeBuffer(&payload)
        }
        if var validator = message.validator {
            let added = message.data.writerIndex - before
            let valid = message.data.withUnsafeReadableBytes { raw in
                validator.feed(UnsafeRawBufferPointer(rebasing: raw[(raw.count - added)...]))
            }
            guard valid else { throw .invalidUTF8 }
            if frame.fin && !validator.isComplete { throw .invalidUTF8 }
            message.validator = validator
        }
        guard frame.fin else {
            partial = message
            return nil
        }
        // Messages the peer sent before it saw our close frame are still delivered (section 1.4).
        return message.opcode == .text ? .text(message.data) : .binary(message.data)
    }

    /// Fails the connection (section 7.1.7): queue the close frame of the error's code and stop.
    private mutating func fail(_ error: WebSocketProtocolError) -> WebSocketEvent {
        if state == .open {
            let code = WebSocketCloseCode(error: error)
            // 1011 never carries internal details; the others name the rule that was broken.
            let reason = code == .internalError ? "" : error.description
            queue(opcode: .close, payload: FrameEncoder.closePayload(code: code, reason: reason))
        }
        state = .closed
        partial = nil
        return .failed(error)
    }

    // MARK: Sending

    /// Queues a text message (the bytes must be UTF-8). Returns false once a close frame was sent.
    @discardableResult
    public mutating func sendText(_ payload: ByteBuffer) -> Bool {
        sendMessage(opcode: .text, payload: payload)
    }

    /// Queues a binary message. Returns false once a close frame was sent.
    @discardableResult
    public mutating func sendBinary(_ payload: ByteBuffer) -> Bool {
        sendMessage(opcode: .binary, payload: payload)
    }

    /// Queues a ping (payload at most 125 bytes). Returns false once a close frame was sent.
    @discardableResult
    public mutating func sendPing(_ payload: ByteBuffer = ByteBuffer()) -> Bool {
        precondition(payload.readableBytes <= 125, "control frame payloads are at most 125 bytes")
        guard state == .open else { return false }
        queue(opcode: .ping, payload: payload)
        return true
    }

    /// Starts the close handshake with `code` (which must be valid on the wire) and a reason.
    /// Does nothing when a close frame was already sent.
    public mutating func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") {
        precondition(code.isValidOnWire, "close code \(code) may not be sent")
        guard state == .open else { return }
        queue(opcode: .close, payload: FrameEncoder.closePayload(code: code, reason: reason))
        state = .closeSent
    }

    /// Marks the connection closed without a handshake: the transport ended or a timeout passed.
    public mutating func abandon() {
        state = .closed
        partial = nil
    }

    /// Closes the connection for good and lets go of everything it holds: frames still queued, the
    /// parser's partial frame, and the compression contexts (a deflater's is about 256 KiB). For a
    /// connection whose transport is gone while something may keep the connection itself.
    public mutating func release() {
        abandon()
        parser = FrameParser(role: role, maxFrameSize: limits.maxFrameSize, allowsRSV1: compression != nil)
        inflater = nil
        deflater = nil
        firstOutbound = nil
        moreOutbound = []
        outboundBytes = 0
    }

    /// Queues bytes of a whole frame encoded once for many recipients (server role only). The frame
    /// must be unmasked, and compressed only when ``canShareCompressedFrames`` is true.
    /// Returns false once a close frame was sent.
    @discardableResult
    public mutating func sendEncodedFrame(_ bytes: ByteBuffer) -> Bool {
        precondition(role == .server, "shared frames are unmasked: server role only")
        guard state == .open else { return false }
        enqueue(bytes)
        return true
    }

    /// True when frames compressed without context takeover at ``sharedCompressionWindowBits`` can be
    /// sent to this connection: the server agreed to drop its window after every message.
    public var canShareCompressedFrames: Bool {
        role == .server && compression?.serverNoContextTakeover == true
    }

    /// The window a shared compressed frame for this connection must have been made with.
    public var sharedCompressionWindowBits: Int {
        min(compression?.serverMaxWindowBits ?? 15, compressionConfiguration.maxWindowBits)
    }

    /// Hands the bytes queued for the transport since the last call to `body`, in order, and forgets
    /// them. The queue keeps its storage, so a connection in steady state allocates nothing here.
    public mutating func drainOutbound(_ body: (ByteBuffer) -> Void) {
        guard let first = firstOutbound else { return }
        body(first)
        for bytes in moreOutbound { body(bytes) }
        forgetOutbound()
    }

    /// Empties the outbound queue, keeping its storage.
    private mutating func forgetOutbound() {
        firstOutbound = nil
        moreOutbound.removeAll(keepingCapacity: true)
        outboundBytes = 0
    }

    /// Takes what waits for the transport as the writes to make, and forgets it: ``OutboundWrite/none``
    /// when nothing waits; one buffer for one frame, or for several that together take at most
    /// `limit` bytes (copied into one buffer, so that they cost the transport one write); otherwise
    /// each frame as it is, so that a large one is never copied.
    ///
    /// One mutating call for the decision and the frames: a caller holding the connection in a class
    /// (the NIO handler, at every flush) would copy the whole value to ask its getters first.
    public mutating func takeOutboundWrite(coalescingUpTo limit: Int) -> OutboundWrite {
        guard let first = firstOutbound else { return .none }
        defer { forgetOutbound() }
        if moreOutbound.isEmpty { return .single(first) }
        guard outboundBytes <= limit else { return .frames([first] + moreOutbound) }
        var combined = allocator.buffer(capacity: outboundBytes)
        combined.writeImmutableBuffer(first)
        for bytes in moreOutbound { combined.writeImmutableBuffer(bytes) }
        return .single(combined)
    }

    private mutating func enqueue(_ bytes: ByteBuffer) {
        if firstOutbound == nil {
            firstOutbound = bytes
        } else {
            moreOutbound.append(bytes)
        }
        outboundBytes += bytes.readableBytes
    }

    /// The bytes queued for the transport since the last call, in order (a convenience over
    /// ``drainOutbound(_:)``).
    public mutating func takeOutbound() -> [ByteBuffer] {
        var taken: [ByteBuffer] = []
        drainOutbound { taken.append($0) }
        return taken
    }

    /// Whether bytes are waiting in ``takeOutbound()``.
    public var hasOutbound: Bool { firstOutbound != nil }

    /// How many frames are waiting in ``takeOutbound()``.
    public var outboundFrameCount: Int { firstOutbound == nil ? 0 : 1 + moreOutbound.count }

    /// How many bytes are waiting in ``takeOutbound()``.
    public var outboundByteCount: Int { outboundBytes }

    private mutating func sendMessage(opcode: WebSocketOpcode, payload: ByteBuffer) -> Bool {
        guard state == .open else { return false }
        if let compression, payload.readableBytes >= compressionConfiguration.compressionThreshold {
            let deflater = self.deflater ?? Deflater(
                windowBits: min(compression.sendWindowBits(as: role), compressionConfiguration.maxWindowBits),
                level: compressionConfiguration.level,
                noContextTakeover: compression.sendsWithoutContextTakeover(as: role))
            self.deflater = deflater
            queue(opcode: opcode, payload: deflater.compressMessage(payload, allocator: allocator), rsv1: true)
        } else {
            queue(opcode: opcode, payload: payload)
        }
        return true
    }

    private mutating func queue(opcode: WebSocketOpcode, payload: ByteBuffer, rsv1: Bool = false) {
        var out = allocator.buffer(capacity: FrameEncoder.maxHeaderSize + payload.readableBytes)
        FrameEncoder.encode(rsv1: rsv1, opcode: opcode, payload: payload, maskingKey: settings.makeMaskingKey?(), into: &out)
        enqueue(out)
    }
}
