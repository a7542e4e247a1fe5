import NIOCore

/// Encodes a server message once for every recipient of a fan-out: one plain frame, and, for
/// connections that agreed to server_no_context_takeover (``WebSocketConnection/canShareCompressedFrames``),
/// one compressed frame per window size. Compressing without context takeover makes the bytes the
/// same for every such connection, so each recipient costs a reference, not a deflate.
///
/// Not thread-safe: one per event loop.
public final class SharedFrameEncoder {
    public let configuration: PerMessageDeflateConfiguration
    private var deflaters: [Int: Deflater] = [:]
    private let allocator: ByteBufferAllocator

    public init(configuration: PerMessageDeflateConfiguration, allocator: ByteBufferAllocator = .init()) {
        self.configuration = configuration
        self.allocator = allocator
    }

    /// A message encoded for many connections.
    public struct Frames: Sendable {
        /// The uncompressed frame, for connections without (shareable) compression.
        public var plain: ByteBuffer
        /// Compressed frames by window bits; empty when the payload is under the compression threshold.
        public var compressed: [Int: ByteBuffer]

        /// The bytes to send to `connection`.
        public func frame(for connection: WebSocketConnection) -> ByteBuffer {
            guard connection.canShareCompressedFrames, let shared = compressed[connection.sharedCompressionWindowBits] else {
                return plain
            }
            return shared
        }
    }

    /// Encodes `payload` as one text (or binary) message; `windowBits` lists the window sizes the
    /// recipients need (see ``WebSocketConnection/sharedCompressionWindowBits``).
    public func encode(_ payload: ByteBuffer, opcode: WebSocketOpcode = .text, windowBits: Set<Int> = [15]) -> Frames {
        var plain = allocator.buffer(capacity: FrameEncoder.maxHeaderSize + payload.readableBytes)
        FrameEncoder.encode(opcode: opcode, payload: payload, maskingKey: nil, into: &plain)
        var compressed: [Int: ByteBuffer] = [:]
        if configuration.isEnabled && payload.readableBytes >= configuration.compressionThreshold {
            for bits in windowBits {
                let deflater = deflaters[bits] ?? Deflater(windowBits: bits, level: configuration.level, noContextTakeover: true)
                deflaters[bits] = deflater
                let body = deflater.compressMessage(payload, allocator: allocator)
                var frame = allocator.buffer(capacity: FrameEncoder.maxHeaderSize + body.readableBytes)
                FrameEncoder.encode(rsv1: true, opcode: opcode, payload: body, maskingKey: nil, into: &frame)
                compressed[bits] = frame
            }
        }
        return Frames(plain: plain, compressed: compressed)
    }
}
