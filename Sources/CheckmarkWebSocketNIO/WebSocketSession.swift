import CheckmarkWebSocket
import NIOCore

/// The application's handle on one open connection. Must be used on ``eventLoop``; writes are
/// flushed once per read cycle or at the end of the current event-loop tick. Once the connection has
/// left its channel's pipeline, sends answer false, `close` and `setReading` do nothing, the
/// buffered byte count is 0 and it is not writable (the handler released its codec state, which is
/// then closed and holds nothing); ``eventLoop`` still answers.
///
/// A value, not an object of its own: it is the connection's channel handler, seen from the
/// application (an idle connection then keeps one object less). Copies are the same connection.
public struct WebSocketSession {
    /// Strong, so that the per-frame calls of a fan-out cost no weak load; the handler lets go of the
    /// application when it leaves the pipeline, which ends the cycle handler → application → session.
    let handler: WebSocketChannelHandler

    init(handler: WebSocketChannelHandler) {
        self.handler = handler
    }

    /// The event loop of the connection's channel.
    public var eventLoop: any EventLoop { handler.eventLoop }

    /// Sends a text message; false when the connection is closing or gone.
    @discardableResult
    public func send(text: ByteBuffer) -> Bool { handler.send(.text(text)) }

    /// Sends a binary message; false when the connection is closing or gone.
    @discardableResult
    public func send(binary: ByteBuffer) -> Bool { handler.send(.binary(binary)) }

    /// Sends frame bytes encoded once for many recipients; false when closing or gone. The frame goes
    /// to the socket at the end of the tick, with the others sent to this connection in the tick.
    @discardableResult
    public func send(encodedFrame: ByteBuffer) -> Bool { handler.sendEncoded(encodedFrame) }

    /// Starts the close handshake.
    public func close(code: WebSocketCloseCode, reason: String = "") { handler.close(code: code, reason: reason) }

    /// Bytes queued for this connection and not yet taken by the kernel (frames waiting for the end of
    /// the tick included): what a slow consumer costs.
    public var bufferedOutboundBytes: Int { handler.bufferedOutboundBytes }

    /// Whether frames from a ``SharedFrameEncoder`` may be sent compressed to this connection.
    public var canShareCompressedFrames: Bool { handler.isAttached && handler.canShareCompressedFrames }

    /// The window size shared compressed frames for this connection must use.
    public var sharedCompressionWindowBits: Int { handler.sharedCompressionWindowBits }

    /// Stops or resumes reading from the socket (the peer's writes then back up in the kernel's
    /// buffers and its own): how a load test plays a consumer that stops reading.
    public func setReading(_ reading: Bool) { handler.setReading(reading) }

    /// Sets the socket's receive buffer (SO_RCVBUF; the kernel stops auto-tuning it): a load test's
    /// slow consumer with a small buffer backs up to the server quickly.
    public func setReceiveBuffer(bytes: Int) { handler.setReceiveBuffer(bytes: bytes) }

    /// False while the socket's outbound buffer is above the channel's high-water mark. While true,
    /// ``bufferedOutboundBytes`` is below the mark plus ``maxHeldBytes``.
    public var isWritable: Bool { handler.isWritable }

    /// Frames from ``send(encodedFrame:)`` wait for the end of the tick while together they are below
    /// this; reaching it hands them to the socket's buffer at once, whose writability then counts them.
    public static let maxHeldBytes = 64 * 1024
}
