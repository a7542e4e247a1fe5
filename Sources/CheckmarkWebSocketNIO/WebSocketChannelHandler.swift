import CheckmarkWebSocket
import NIOCore

/// The NIO shell around ``WebSocketConnection``: feeds it the socket's bytes, performs what it asks
/// (write, close), runs its timers, and hands complete messages to a ``WebSocketApplication``.
///
/// Writes are flushed once per read cycle, or once per event-loop tick for writes that do not come
/// from a read. Frames encoded once for many recipients wait in the connection until the flush (or
/// until they reach ``WebSocketSession/maxHeldBytes``), and small frames waiting together go to the
/// channel as one buffer: a connection that gets several events in one tick costs one channel write,
/// not one per event.
///
/// Closing: a server half-closes (FIN after its close frame) as soon as the handshake is over or the
/// peer failed, and drops the socket at EOF or after the close timeout; a client waits for the server
/// to close, up to the same timeout.
public final class WebSocketChannelHandler: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    // Stored properties are laid out in the order written: the one-byte flags come last, together,
    // so that no padding follows each of them (an idle connection keeps this object).
    private var connection: WebSocketConnection
    /// Let go when the handler leaves the pipeline: the application holds this handler through its
    /// ``WebSocketSession``, and that cycle must end with the connection.
    private var application: (any WebSocketApplication)?
    private var context: ChannelHandlerContext?
    /// The batch that flushes this connection at the end of a tick (its loop's, found once).
    private var flushBatch: LoopFlushBatch?
    /// The loop's clock that pings this connection and closes it at the idle timeout (no scheduled
    /// task of its own: what an idle connection costs), while it watches it.
    private var keepalive: LoopKeepalive?
    /// This connection's place among the connections `keepalive` watches (kept by it).
    var keepaliveIndex = 0
    private var lastRead: NIODeadline = .now()
    /// When the last keepalive ping went out; the next one waits a whole interval after it.
    private var lastPing: NIODeadline = .distantPast
    private var closeTask: Scheduled<Void>?
    private let timeouts: WebSocketTimeouts
    private var closeCode: WebSocketCloseCode?
    private var flushScheduled = false
    /// The channel's writability as its last `channelWritabilityChanged` said: read per frame without
    /// going through the pipeline to the channel.
    private var writable = false
    /// Bytes written to the channel since the last flush.
    private var unflushed = false
    private var transportClosing = false
    private var disconnectedReported = false

    public init(connection: WebSocketConnection, application: any WebSocketApplication, timeouts: WebSocketTimeouts) {
        self.connection = connection
        self.application = application
        self.timeouts = timeouts
    }

    /// Frames waiting for one write are copied into one buffer when together they are at most this big
    /// (what shared frames may wait up to); past it they go to the channel one by one, so that a large
    /// reply is never copied.
    static let coalescedWriteLimit = WebSocketSession.maxHeldBytes

    var isWritable: Bool { writable }

    /// In a pipeline: from `handlerAdded` until `handlerRemoved`.
    var isAttached: Bool { context != nil }

    /// The loop of the channel this handler was added to. Only asked of a ``WebSocketSession``, which
    /// exists from `handlerAdded` on: `flushBatch` is set there, before the application is given a
    /// session, and never changes, so a session handed to another thread reads it safely.
    var eventLoop: any EventLoop {
        guard let flushBatch else { preconditionFailure("a WebSocketSession exists only once its handler is in a pipeline") }
        return flushBatch.eventLoop
    }

    private var session: WebSocketSession { WebSocketSession(handler: self) }

    func setReceiveBuffer(bytes: Int) {
        try? context?.channel.syncOptions?.setOption(.socketOption(.so_rcvbuf), value: SocketOptionValue(bytes))
    }

    func setReading(_ reading: Bool) {
        guard let channel = context?.channel else { return }
        try? channel.syncOptions?.setOption(.autoRead, value: reading)
        if reading { channel.read() }
    }

    /// Bytes waiting for the socket: frames held for the end of the tick, and the channel's outbound
    /// buffer not yet taken by the kernel.
    var bufferedOutboundBytes: Int {
        connection.outboundByteCount + ((try? context?.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0)
    }

    var canShareCompressedFrames: Bool { connection.canShareCompressedFrames }
    var sharedCompressionWindowBits: Int { connection.sharedCompressionWindowBits }

    public func channelWritabilityChanged(context: ChannelHandlerContext) {
        writable = context.channel.isWritable
        application?.writabilityChanged(session, isWritable: context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        writable = context.channel.isWritable
        flushBatch = LoopFlushBatch.of(context.eventLoop)
        lastRead = context.eventLoop.now
        startKeepalive(on: context.eventLoop)
        application?.connected(session)
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
        reportDisconnected()
        writable = false
        application = nil
        // A session the application keeps holds this handler: keep nothing more for it.
        connection.release()
        self.context = nil
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastRead = context.eventLoop.now
        connection.receive(unwrapInboundIn(data))
        processEvents()
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        writeQueued()
        flushNow()
        context.fireChannelReadComplete()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        writable = false
        connection.abandon()
        cancelTimers()
        reportDisconnected()
        context.fireChannelInactive()
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            // The peer finished sending. If the handshake is over this is the expected end; otherwise
            // the peer dropped the connection without a close frame.
            connection.abandon()
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.abandon()
        context.close(promise: nil)
    }

    // MARK: Application calls

    func send(_ message: WebSocketMessage) -> Bool {
        let sent: Bool
        switch message {
        case .text(let bytes): sent = connection.sendText(bytes)
        case .binary(let bytes): sent = connection.sendBinary(bytes)
        }
        writeOutbound()
        return sent
    }

    /// Queues a shared frame for the end of the tick; written to the channel at once when the frames
    /// waiting reach ``WebSocketSession/maxHeldBytes``, so that the socket's writability still tells a
    /// slow consumer.
    func sendEncoded(_ frame: ByteBuffer) -> Bool {
        guard connection.sendEncodedFrame(frame) else { return false }
        if connection.outboundByteCount >= WebSocketSession.maxHeldBytes { writeQueued() }
        scheduleFlush()
        return true
    }

    func close(code: WebSocketCloseCode, reason: String) {
        connection.close(code: code, reason: reason)
        closeCode = closeCode ?? code
        writeOutbound()
        afterStateChange()
    }

    // MARK: Mechanics

    private func processEvents() {
        while let event = connection.nextEvent() {
            switch event {
            case .text(let bytes):
                application?.received(.text(bytes), on: session)
            case .binary(let bytes):
                application?.received(.binary(bytes), on: session)
            case .ping, .pong:
                break
            case .closeReceived(let code, _):
                closeCode = closeCode ?? code ?? .normalClosure
            case .failed(let error):
                closeCode = WebSocketCloseCode(error: error)
            }
        }
        writeOutbound()
        afterStateChange()
    }

    /// Moves queued frames to the channel; flushes now or at the end of this tick.
    private func writeOutbound() {
        guard writeQueued() else { return }
        scheduleFlush()
    }

    /// Hands the frames waiting in the connection to the channel, in order: several small ones as one
    /// buffer (one channel write), otherwise each as it is. Whether anything was written.
    @discardableResult
    private func writeQueued() -> Bool {
        guard let context else { return false }
        // Taken out of the connection before any write: a write that crosses the channel's high-water
        // mark reports unwritability at once, and what that starts may use the connection again.
        switch connection.takeOutboundWrite(coalescingUpTo: Self.coalescedWriteLimit) {
        case .none:
            return false
        case .single(let bytes):
            context.write(wrapOutboundOut(bytes), promise: nil)
        case .frames(let frames):
            for bytes in frames { context.write(wrapOutboundOut(bytes), promise: nil) }
        }
        unflushed = true
        return true
    }

    /// Flushed at the end of the read cycle, or of this event-loop tick for writes that do not come from
    /// a socket read (fan-out, timers, bytes handed over by the HTTP decoder).
    private func scheduleFlush() {
        guard !flushScheduled, context != nil, let flushBatch else { return }
        flushScheduled = true
        flushBatch.add(self)
    }

    /// Called by the loop's ``LoopFlushBatch`` at the end of the tick.
    func flushPending() {
        flushScheduled = false
        writeQueued()
        flushNow()
    }

    private func flushNow() {
        guard unflushed else { return }
        unflushed = false
        context?.flush()
    }

    private func afterStateChange() {
        guard let context, !transportClosing else { return }
        switch connection.state {
        case .open:
            return
        case .closeSent:
            // Wait for the peer's close frame, but not forever.
            if closeTask == nil {
                closeTask = context.eventLoop.assumeIsolated().scheduleTask(in: timeouts.closeTimeout) { [self] in
                    self.context?.close(promise: nil)
                }
            }
        case .closed:
            transportClosing = true
            writeQueued()
            flushNow()
            closeTask?.cancel()
            if connection.role == .server {
                context.close(mode: .output, promise: nil)
            }
            closeTask = context.eventLoop.assumeIsolated().scheduleTask(in: timeouts.closeTimeout) { [self] in
                self.context?.close(promise: nil)
            }
        }
    }

    private func startKeepalive(on eventLoop: any EventLoop) {
        guard let period = LoopKeepalive.period(for: timeouts) else { return }
        let keepalive = LoopKeepalive.of(eventLoop)
        keepalive.add(self, period: period)
        self.keepalive = keepalive
    }

    private func stopKeepalive() {
        keepalive?.remove(self)
        keepalive = nil
    }

    /// Pings only a connection that has been silent for a whole interval (a busy connection already
    /// proves it is alive, and pings in the middle of a stream of messages are noise to the peer), and
    /// at most once per interval while it stays silent. Closes with 1001 a connection that has sent
    /// nothing for the idle timeout. Called by the loop's ``LoopKeepalive``.
    func keepaliveTick(at now: NIODeadline) {
        guard keepalive != nil else { return }
        if let idle = timeouts.idleTimeout, lastRead + idle <= now {
            stopKeepalive()
            close(code: .goingAway, reason: "idle timeout")
            return
        }
        if let interval = timeouts.keepaliveInterval, max(lastRead, lastPing) + interval <= now {
            lastPing = now
            if connection.sendPing() { writeOutbound() }
        }
    }

    private func cancelTimers() {
        stopKeepalive()
        closeTask?.cancel()
        closeTask = nil
    }

    private func reportDisconnected() {
        guard !disconnectedReported, isAttached, let application else { return }
        disconnectedReported = true
        application.disconnected(session, code: closeCode)
    }
}
