import NIOCore

/// Splits a peer link's bytes into its frames: each a 32-bit big-endian length, then that many bytes
/// of UTF-8 text (a handshake line or a ``PeerMessage``).
/// - Throws: ``PeerFrameDecoder/FrameTooLarge`` for a frame longer than `maxFrameBytes` (the link is
///   closed: the other side does not speak this protocol, or misbehaves).
struct PeerFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = String

    struct FrameTooLarge: Error, CustomStringConvertible {
        var bytes: Int
        var limit: Int
        var description: String { "a peer link frame of \(bytes) bytes is over the limit of \(limit)" }
    }

    let maxFrameBytes: Int

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
        guard length <= maxFrameBytes else { throw FrameTooLarge(bytes: Int(length), limit: maxFrameBytes) }
        guard buffer.readableBytes >= 4 + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 4)
        let text = buffer.readString(length: Int(length)) ?? ""
        context.fireChannelRead(wrapInboundOut(text))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}
