import NIOCore

/// What a ``WebSocketConnection`` reports from the bytes it received.
public enum WebSocketEvent: Sendable, Equatable {
    /// A complete text message; the bytes are valid UTF-8.
    case text(ByteBuffer)
    /// A complete binary message.
    case binary(ByteBuffer)
    /// A ping; the matching pong is already queued.
    case ping(ByteBuffer)
    /// A pong.
    case pong(ByteBuffer)
    /// The peer's close frame (code nil when it carried none). When the peer started the close, the
    /// reply is already queued.
    case closeReceived(code: WebSocketCloseCode?, reason: String)
    /// The peer broke the protocol: a close frame with the mapped code is queued and the connection is
    /// ``WebSocketConnection/State/closed``.
    case failed(WebSocketProtocolError)
}
