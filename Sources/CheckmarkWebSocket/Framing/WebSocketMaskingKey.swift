import NIOCore

/// The 4-byte key a client XORs over every payload it sends (RFC 6455 section 5.3).
public struct WebSocketMaskingKey: Sendable, Hashable {
    public var bytes: (UInt8, UInt8, UInt8, UInt8)

    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
        bytes = (b0, b1, b2, b3)
    }

    /// A key from the low 32 bits of a random value, most significant byte first.
    public init(_ value: UInt32) {
        self.init(UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
                  UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value))
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.bytes.0 == rhs.bytes.0 && lhs.bytes.1 == rhs.bytes.1 && lhs.bytes.2 == rhs.bytes.2
            && lhs.bytes.3 == rhs.bytes.3
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.0)
        hasher.combine(bytes.1)
        hasher.combine(bytes.2)
        hasher.combine(bytes.3)
    }

    /// XORs the key over `buffer` in place, as if the buffer started `offset` bytes into the payload.
    /// Masking and unmasking are the same operation. Works a machine word at a time.
    public func apply(to buffer: UnsafeMutableRawBufferPointer, offset: Int = 0) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        // The key as a little-endian word (byte i of the key at bits 8i), rotated so that byte 0 of the
        // word is the key byte for payload position `offset`.
        let key = UInt32(bytes.0) | UInt32(bytes.1) << 8 | UInt32(bytes.2) << 16 | UInt32(bytes.3) << 24
        let shift = UInt32((offset & 3) * 8)
        let rotated = shift == 0 ? key : (key >> shift) | (key << (32 - shift))
        let word = UInt64(rotated) | UInt64(rotated) << 32
        // `word` is little-endian in meaning; on a big-endian host swap it once for in-memory XOR.
        let wordInMemory = UInt64(littleEndian: word)
        let count = buffer.count
        var index = 0
        while index + 8 <= count {
            let value = (base + index).loadUnaligned(as: UInt64.self)
            (base + index).storeBytes(of: value ^ wordInMemory, as: UInt64.self)
            index += 8
        }
        // Fewer than eight bytes remain, starting at a multiple of eight: same phase as `word`.
        var tail = word
        while index < count {
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            base.storeBytes(of: byte ^ UInt8(truncatingIfNeeded: tail), toByteOffset: index, as: UInt8.self)
            tail >>= 8
            index += 1
        }
    }

    /// XORs the key over the readable bytes of `buffer`.
    public func apply(to buffer: inout ByteBuffer, offset: Int = 0) {
        buffer.withUnsafeMutableReadableBytes { apply(to: $0, offset: offset) }
    }
}
