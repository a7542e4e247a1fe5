import NIOCore

/// Serializes frames (RFC 6455 section 5.2). Servers pass no masking key; clients pass a fresh random
/// key per frame. Encoding never fails: callers keep control frames within 125 bytes.
public enum FrameEncoder {
    /// Largest header: 2 bytes, 8 bytes of extended length, 4 bytes of masking key.
    public static let maxHeaderSize = 14

    /// Appends the frame header for a payload of `length` bytes.
    public static func writeHeader(
        fin: Bool = true, rsv1: Bool = false, opcode: WebSocketOpcode, length: Int,
        maskingKey: WebSocketMaskingKey?, into out: inout ByteBuffer
    ) {
        var first = opcode.rawValue
        if fin { first |= 0x80 }
        if rsv1 { first |= 0x40 }
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        out.writeInteger(first)
        switch length {
        case 0...125:
            out.writeInteger(UInt8(length) | maskBit)
        case 126...0xFFFF:
            out.writeInteger(126 | maskBit)
            out.writeInteger(UInt16(length))
        default:
            out.writeInteger(127 | maskBit)
            out.writeInteger(UInt64(length))
        }
        if let key = maskingKey {
            out.writeMultipleIntegers(key.bytes.0, key.bytes.1, key.bytes.2, key.bytes.3)
        }
    }

    /// Appends a whole frame: header, then the payload (masked if a key is given).
    public static func encode(
        fin: Bool = true, rsv1: Bool = false, opcode: WebSocketOpcode, payload: ByteBuffer,
        maskingKey: WebSocketMaskingKey?, into out: inout ByteBuffer
    ) {
        writeHeader(fin: fin, rsv1: rsv1, opcode: opcode, length: payload.readableBytes,
                    maskingKey: maskingKey, into: &out)
        let payloadStart = out.writerIndex
        var payload = payload
        out.writeBuffer(&payload)
        if let key = maskingKey {
            let length = out.writerIndex - payloadStart
            let from = payloadStart - out.readerIndex
            out.withUnsafeMutableReadableBytes { raw in
                key.apply(to: UnsafeMutableRawBufferPointer(rebasing: raw[from..<(from + length)]))
            }
        }
    }

    /// A whole frame in a buffer of its own.
    public static func encode(
        _ frame: WebSocketFrame, maskingKey: WebSocketMaskingKey?, allocator: ByteBufferAllocator = .init()
    ) -> ByteBuffer {
        var out = allocator.buffer(capacity: maxHeaderSize + frame.payload.readableBytes)
        encode(fin: frame.fin, rsv1: frame.rsv1, opcode: frame.opcode, payload: frame.payload,
               maskingKey: maskingKey, into: &out)
        return out
    }

    /// The payload of a close frame: the code, then the UTF-8 reason (cut to fit 123 bytes on a
    /// character boundary).
    public static func closePayload(code: WebSocketCloseCode?, reason: String) -> ByteBuffer {
        var out = ByteBuffer()
        guard let code else { return out }
        out.writeInteger(code.rawValue)
        var used = 0
        for scalar in reason.unicodeScalars {
            let size = String(scalar).utf8.count
            if used + size > 123 { break }
            used += size
        }
        let utf8 = reason.utf8.prefix(used)
        out.writeBytes(utf8)
        return out
    }
}
