import NIOCore

/// One WebSocket frame with its payload already unmasked (RFC 6455 section 5.2).
public struct WebSocketFrame: Sendable, Equatable {
    public var fin: Bool
    /// RSV1: on the first frame of a message, "compressed" when permessage-deflate is negotiated (RFC 7692).
    public var rsv1: Bool
    public var rsv2: Bool
    public var rsv3: Bool
    public var opcode: WebSocketOpcode
    public var payload: ByteBuffer

    public init(
        fin: Bool = true, rsv1: Bool = false, rsv2: Bool = false, rsv3: Bool = false,
        opcode: WebSocketOpcode, payload: ByteBuffer
    ) {
        self.fin = fin
        self.rsv1 = rsv1
        self.rsv2 = rsv2
        self.rsv3 = rsv3
        self.opcode = opcode
        self.payload = payload
    }
}
