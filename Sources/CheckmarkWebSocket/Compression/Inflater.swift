import CZlib
import NIOCore

/// Raw-DEFLATE decompression for permessage-deflate (RFC 7692 section 7.2.2), over the system zlib.
///
/// A reference type because zlib's stream state must not move in memory. Not thread-safe: one per
/// connection, used on that connection's event loop.
public final class Inflater {
    private let stream: UnsafeMutablePointer<z_stream>
    /// The four bytes a sender strips from the end of each compressed message (section 7.2.1).
    private static let messageTail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]
    /// Output is produced in steps of at most this many bytes, so the size limit is enforced early.
    private static let outputStep = 16 * 1024

    /// Always inflates with a 32 KiB window: valid for any window the peer negotiated (8 to 15 bits).
    public init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = czlib_inflateInit2(stream, -15)
        precondition(status == Z_OK, "inflateInit2 failed with \(status): out of memory")
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Forgets the sliding window (no context takeover).
    public func reset() {
        inflateReset(stream)
    }

    /// Inflates `input`, appending to `output`, which may hold at most `limit` bytes in all.
    /// - Throws: ``WebSocketProtocolError/invalidCompressedData`` (1007) on corrupt input,
    ///   ``WebSocketProtocolError/messageTooLarge(limit:)`` (1009) once `output` would pass `limit`.
    public func inflate(_ input: ByteBuffer, into output: inout ByteBuffer, limit: Int) throws(WebSocketProtocolError) {
        var input = input
        try input.withUnsafeMutableReadableBytes { (raw) throws(WebSocketProtocolError) in
            try run(raw, into: &output, limit: limit)
        }
    }

    /// Inflates the implicit end of a message (`00 00 FF FF`).
    public func finishMessage(into output: inout ByteBuffer, limit: Int) throws(WebSocketProtocolError) {
        try inflate(ByteBuffer(bytes: Self.messageTail), into: &output, limit: limit)
    }

    private func run(_ input: UnsafeMutableRawBufferPointer, into output: inout ByteBuffer, limit: Int) throws(WebSocketProtocolError) {
        guard input.count > 0 else { return }
        stream.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        while true {
            let room = limit - output.readableBytes
            // One spare byte beyond the limit tells "exactly at the limit" from "over it".
            let step = min(Self.outputStep, room + 1)
            output.reserveCapacity(minimumWritableBytes: step)
            var status: Int32 = Z_OK
            var produced = 0
            output.withUnsafeMutableWritableBytes { out in
                stream.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(step)
                status = CZlib.inflate(stream, Z_SYNC_FLUSH)
                produced = step - Int(stream.pointee.avail_out)
            }
            output.moveWriterIndex(forwardBy: produced)
            stream.pointee.next_out = nil
            if output.readableBytes > limit { throw .messageTooLarge(limit: limit) }
            switch status {
            case Z_OK:
                // Output space ran out: there may be more. Otherwise all input is consumed.
                if stream.pointee.avail_out == 0 { continue }
                if stream.pointee.avail_in == 0 { return }
            case Z_BUF_ERROR:
                return  // no progress possible: all input consumed, nothing more to emit
            case Z_STREAM_END:
                // The sender ended the deflate stream (BFINAL); a later message starts a new one.
                inflateReset(stream)
                if stream.pointee.avail_in == 0 { return }
            default:
                throw .invalidCompressedData
            }
        }
    }
}
