import CZlib
import NIOCore

/// Raw-DEFLATE compression for permessage-deflate (RFC 7692 section 7.2.1), over the system zlib.
///
/// A reference type because zlib's stream state must not move in memory. Not thread-safe: one per
/// connection (or one per event loop for shared, context-free frames).
public final class Deflater {
    private let stream: UnsafeMutablePointer<z_stream>
    /// Whether the sliding window is dropped after every message (no context takeover).
    public let resetsAfterEachMessage: Bool
    /// zlib's `memLevel`: its hash table has `1 << (memoryLevel + 7)` entries, as many as the window
    /// has bytes (zlib's own proportion at its defaults, a 15-bit window and `memLevel` 8). The
    /// table is rescanned every time the window slides, so one sized for a 32 KiB window behind a
    /// 512-byte one costs about 130 operations per input byte and 128 KiB per deflater.
    public let memoryLevel: Int

    /// - Parameters:
    ///   - windowBits: 8 to 15. zlib cannot deflate with a 256-byte window, so 8 deflates with a
    ///     512-byte window restricted to run-length matches (distance 1), which a 256-byte-window
    ///     inflater reads correctly.
    ///   - level: zlib level, 1 (fastest) to 9 (smallest).
    ///   - noContextTakeover: drop the window after every message.
    public init(windowBits: Int = 15, level: Int = 6, noContextTakeover: Bool = false) {
        precondition((8...15).contains(windowBits) && (0...9).contains(level))
        resetsAfterEachMessage = noContextTakeover
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let strategy = windowBits == 8 ? Z_RLE : Z_DEFAULT_STRATEGY
        let zlibWindowBits = max(windowBits, 9)
        memoryLevel = zlibWindowBits - 7
        let status = czlib_deflateInit2(stream, Int32(level), -Int32(zlibWindowBits), Int32(memoryLevel), strategy)
        precondition(status == Z_OK, "deflateInit2 failed with \(status): out of memory")
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Compresses one whole message: the deflate output flushed to a byte boundary, without the
    /// trailing `00 00 FF FF` (section 7.2.1).
    public func compressMessage(_ payload: ByteBuffer, allocator: ByteBufferAllocator = .init()) -> ByteBuffer {
        var input = payload
        var output = allocator.buffer(capacity: Int(deflateBound(stream, uLong(payload.readableBytes))) + 16)
        input.withUnsafeMutableReadableBytes { raw in
            stream.pointee.next_in = raw.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_in = uInt(raw.count)
            repeat {
                output.reserveCapacity(minimumWritableBytes: 64)
                let room = output.writableBytes
                var produced = 0
                output.withUnsafeMutableWritableBytes { out in
                    stream.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.pointee.avail_out = uInt(room)
                    let status = deflate(stream, Z_SYNC_FLUSH)
                    precondition(status == Z_OK || status == Z_BUF_ERROR, "deflate failed with \(status)")
                    produced = room - Int(stream.pointee.avail_out)
                }
                output.moveWriterIndex(forwardBy: produced)
            } while stream.pointee.avail_out == 0 || stream.pointee.avail_in > 0
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
        }
        if resetsAfterEachMessage { deflateReset(stream) }
        // Z_SYNC_FLUSH always ends with an empty stored block: 00 00 FF FF.
        precondition(output.readableBytes >= 4)
        output.moveWriterIndex(to: output.writerIndex - 4)
        return output
    }
}
