import CheckmarkWebSocket
import NIOCore

/// The application's handle on one open connection. Must be used on ``eventLoop``; writes are
/// flushed once per read cycle or at the end of the current event-loop tick.
public final class WebSocketSession {
    public let eventLoop: any EventLoop
    public let id: Int
    /// Strong, so that the per-frame calls of a fan-out cost no weak load; the handler clears it when
    /// it leaves the pipeline, which ends the cycle handler → application → session → handler.
    var handler: WebSocketChannelHandler?
    /// Application state attached to the connection.
    public var userInfo: AnyObject?

    init(eventLoop: any EventLoop, id: Int, handler: WebSocketChannelHandler) {
        self.eventLoop = eventLoop
        self.id = id
        self.handler = handler
    }

    /// Sends a text message; false when the connection is closing or gone.
    @discardableResult
    public func send(text: ByteBuffer) -> Bool { handler?.send(.text(text)) ?? false }

    /// Sends a binary message; false when the connection is closing or gone.
    @discardableResult
    public func send(binary: ByteBuffer) -> Bool { handler?.send(.binary(binary)) ?? false }

    /// Sends frame bytes encoded once for many recipients; false when closing or gone. The frame goes
    /// to the socket at the end of the tick, with the others sent to this connection in the tick.
    @discardableResult
    public func send(encodedFrame: ByteBuffer) -> Bool { handler?.sendEncoded(encodedFrame) ?? false }

    /// Starts the close handshake.
    public func close(code: WebSocketCloseCode, reason: String = "") { handler?.close(code: code, reason: reason) }

    /// Bytes queued for this connection and not yet taken by the kernel (frames waiting for the end of
    /// the tick included): what a slow consumer costs.
    public var bufferedOutboundBytes: Int { handler?.bufferedOutboundBytes ?? 0 }

    /// Whether frames from a ``SharedFrameEncoder`` may be sent compressed to this connection.
    public var canShareCompressedFrames: Bool { handler?.canShareCompressedFrames ?? false }

    /// The window size shared compressed frames for this connection must use.
    public var sharedCompressionWindowBits: Int { handler?.sharedCompressionWindowBits ?? 15 }

    /// Stops or resumes reading from the socket (the peer's writes then back up in the kernel's
    /// buffers and its own): how a load test plays a consumer that stops reading.
    public func setReading(_ reading: Bool) { handler?.setReading(reading) }

    /// Sets the socket's receive buffer (SO_RCVBUF; the kernel stops auto-tuning it): a load test's
    /// slow consumer with a small buffer backs up to the server quickly.
    public func setReceiveBuffer(bytes: Int) { handler?.setReceiveBuffer(bytes: bytes) }

    /// False while the socket's outbound buffer is above the channel's high-water mark. While true,
    /// ``bufferedOutboundBytes`` is below the mark plus ``maxHeldBytes``.
    public var isWritable: Bool { handler?.isWritable ?? false }

    /// Frames from ``send(encodedFrame:)`` wait for the end of the tick while together they are below
    /// this; reaching it hands them to the socket's buffer at once, whose writability then counts them.
    public static let maxHeldBytes = 64 * 1024
}
