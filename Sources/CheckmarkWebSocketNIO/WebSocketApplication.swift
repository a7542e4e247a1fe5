import CheckmarkWebSocket
import NIOCore

/// What runs on top of a WebSocket connection: the echo service, the gateway. Called on the
/// connection's event loop.
public protocol WebSocketApplication: AnyObject {
    /// The connection is open; `session` sends messages and closes.
    func connected(_ session: WebSocketSession)
    /// A complete text message (valid UTF-8) or binary message arrived.
    func received(_ message: WebSocketMessage, on session: WebSocketSession)
    /// The connection is gone: closed cleanly, failed, or dropped.
    func disconnected(_ session: WebSocketSession, code: WebSocketCloseCode?)
    /// The socket's outbound buffer crossed a water mark: writable again (below the low mark) or not
    /// (above the high mark).
    func writabilityChanged(_ session: WebSocketSession, isWritable: Bool)
}

extension WebSocketApplication {
    public func writabilityChanged(_ session: WebSocketSession, isWritable: Bool) {}
}

/// A complete data message.
public enum WebSocketMessage: Sendable, Equatable {
    case text(ByteBuffer)
    case binary(ByteBuffer)
}
