import NIOCore

/// Frames text for a peer link as ``PeerFrameDecoder`` reads it: a 32-bit big-endian length, then
/// the UTF-8 bytes.
struct PeerFrameEncoder: MessageToByteEncoder {
    typealias OutboundIn = String

    func encode(data: String, out: inout ByteBuffer) throws {
        out.writeInteger(UInt32(data.utf8.count))
        out.writeString(data)
    }
}
