import NIOCore

/// The writes that carry a connection's waiting frames to the transport, in order
/// (``WebSocketConnection/takeOutboundWrite(coalescingUpTo:)``).
public enum OutboundWrite: Equatable {
    /// Nothing waits.
    case none
    /// One write: a single frame, or several small ones copied together.
    case single(ByteBuffer)
    /// One write per frame: together they are too large to copy into one buffer.
    case frames([ByteBuffer])
}
