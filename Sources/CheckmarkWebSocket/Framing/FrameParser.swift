import NIOCore

/// Incremental frame parser (RFC 6455 section 5.2): bytes in, unmasked frames or a protocol error out.
///
/// Header rules are checked as soon as the first two bytes arrive, so a reserved opcode, an unmasked
/// client frame, a fragmented or oversized control frame, or a frame over ``WebSocketLimits/maxFrameSize``
/// is refused before any of its payload is buffered. Feeding the same bytes one at a time or all at
/// once yields the same frames. After an error the parser must not be used again.
public struct FrameParser: Sendable {
    /// What is known about the frame being read.
    private enum State: Sendable {
        /// Waiting for the first two bytes of a header.
        case awaitingHeader
        /// The header is complete and validated; waiting for `length` payload bytes.
        case awaitingPayload(Header)
    }

    // Fields are laid out in the order written: the wide ones first, so that the narrow ones share
    // the padding (every connection holds a parser).
    struct Header: Sendable {
        var length: Int
        var fin: Bool
        var rsv1: Bool
        var rsv2: Bool
        var rsv3: Bool
        var opcode: WebSocketOpcode
        var maskingKey: WebSocketMaskingKey?
    }

    private var buffer: ByteBuffer?
    public let maxFrameSize: Int
    private var state: State = .awaitingHeader
    public let role: WebSocketRole
    /// Whether RSV1 is defined by a negotiated extension (permessage-deflate).
    public var allowsRSV1: Bool

    public init(role: WebSocketRole, maxFrameSize: Int = WebSocketLimits.default.maxFrameSize, allowsRSV1: Bool = false) {
        self.role = role
        self.maxFrameSize = maxFrameSize
        self.allowsRSV1 = allowsRSV1
    }

    /// Bytes received but not yet returned as frames.
    public var bufferedByteCount: Int { buffer?.readableBytes ?? 0 }

    /// Adds received bytes. Takes ownership without copying when nothing is buffered.
    public mutating func append(_ bytes: ByteBuffer) {
        guard bytes.readableBytes > 0 else { return }
        if var existing = buffer, existing.readableBytes > 0 {
            buffer = nil  // keep the storage uniquely referenced while writing
            if existing.readerIndex > 0 && existing.readerIndex >= existing.readableBytes {
                existing.discardReadBytes()
            }
            var incoming = bytes
            existing.writeBuffer(&incoming)
            buffer = existing
        } else {
            buffer = bytes
        }
    }

    /// The next complete frame, or nil when more bytes are needed.
    /// - Throws: ``WebSocketProtocolError`` for any header rule broken (see the type's description).
    public mutating func nextFrame() throws(WebSocketProtocolError) -> WebSocketFrame? {
        guard var bytes = buffer else { return nil }
        buffer = nil
        defer { buffer = bytes.readableBytes > 0 ? bytes : nil }

        let header: Header
        switch state {
        case .awaitingHeader:
            guard let parsed = try parseHeader(&bytes) else { return nil }
            header = parsed
        case .awaitingPayload(let known):
            header = known
        }
        guard bytes.readableBytes >= header.length else {
            state = .awaitingPayload(header)
            return nil
        }
        state = .awaitingHeader
        if let key = header.maskingKey, header.length > 0 {
            // Unmask in the receive buffer itself, while it is uniquely referenced: no copy.
            let start = bytes.readerIndex
            bytes.withUnsafeMutableReadableBytes { raw in
                key.apply(to: UnsafeMutableRawBufferPointer(rebasing: raw[0..<header.length]))
            }
            precondition(bytes.readerIndex == start)
        }
        let payload = bytes.readSlice(length: header.length)!
        return WebSocketFrame(
            fin: header.fin, rsv1: header.rsv1, rsv2: header.rsv2, rsv3: header.rsv3,
            opcode: header.opcode, payload: payload)
    }

    /// Reads and validates a header if all of it is buffered; leaves `bytes` untouched otherwise.
    private func parseHeader(_ bytes: inout ByteBuffer) throws(WebSocketProtocolError) -> Header? {
        let start = bytes.readerIndex
        guard let first = bytes.getInteger(at: start, as: UInt8.self) else { return nil }
        let fin = first & 0x80 != 0
        let rsv1 = first & 0x40 != 0
        let rsv2 = first & 0x20 != 0
        let rsv3 = first & 0x10 != 0
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw .reservedOpcode(first & 0x0F)
        }
        if rsv2 || rsv3 || (rsv1 && !allowsRSV1) { throw .reservedBitsSet }
        if opcode.isControl {
            if !fin { throw .fragmentedControlFrame }
            if rsv1 { throw .reservedBitsSet }
        }
        guard let second = bytes.getInteger(at: start + 1, as: UInt8.self) else { return nil }
        let masked = second & 0x80 != 0
        switch (role, masked) {
        case (.server, false): throw .maskMissing
        case (.client, true): throw .maskUnexpected
        default: break
        }
        let shortLength = Int(second & 0x7F)
        if opcode.isControl && shortLength > 125 { throw .controlFrameTooLarge }

        var offset = start + 2
        let length: Int
        switch shortLength {
        case 126:
            guard let value = bytes.getInteger(at: offset, as: UInt16.self) else { return nil }
            length = Int(value)
            offset += 2
        case 127:
            guard let value = bytes.getInteger(at: offset, as: UInt64.self) else { return nil }
            if value & (1 << 63) != 0 { throw .invalidLength }
            guard value <= UInt64(maxFrameSize) else { throw .frameTooLarge(limit: maxFrameSize) }
            length = Int(value)
            offset += 8
        default:
            length = shortLength
        }
        if length > maxFrameSize { throw .frameTooLarge(limit: maxFrameSize) }

        var maskingKey: WebSocketMaskingKey?
        if masked {
            guard let key = bytes.getInteger(at: offset, as: UInt32.self) else { return nil }
            maskingKey = WebSocketMaskingKey(key)
            offset += 4
        }
        bytes.moveReaderIndex(to: offset)
        return Header(
            length: length, fin: fin, rsv1: rsv1, rsv2: rsv2, rsv3: rsv3, opcode: opcode, maskingKey: maskingKey)
    }
}
