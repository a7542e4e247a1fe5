import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOConcurrencyHelpers
import NIOCore

/// An open client connection with its incoming messages as an async sequence.
public final class WebSocketClientConnection: Sendable {
    public enum Event: Sendable, Equatable {
        case text(String)
        case binary(ByteBuffer)
        /// The connection ended; the close code the server sent (or nil if none).
        case closed(WebSocketCloseCode?)
    }

    /// Incoming messages, then one `.closed`.
    public let events: AsyncStream<Event>
    private let session: UncheckedSession
    private let eventLoop: any EventLoop

    /// The session is only ever touched on `eventLoop`, inside `execute`.
    private struct UncheckedSession: @unchecked Sendable {
        let value: WebSocketSession
    }

    init(events: AsyncStream<Event>, session: WebSocketSession, eventLoop: any EventLoop) {
        self.events = events
        self.session = UncheckedSession(value: session)
        self.eventLoop = eventLoop
    }

    public func send(text: String) {
        let session = self.session
        eventLoop.execute { session.value.send(text: ByteBuffer(string: text)) }
    }

    public func send(binary: ByteBuffer) {
        let session = self.session
        eventLoop.execute { session.value.send(binary: binary) }
    }

    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") {
        let session = self.session
        eventLoop.execute { session.value.close(code: code, reason: reason) }
    }
}

/// Captures the session of a connection opened by ``WebSocketClient``.
final class SessionBox: @unchecked Sendable {
    // Written once on the connection's event loop before the connect call returns, read after.
    private let lock = NIOLock()
    private var _session: WebSocketSession?
    private var _eventLoop: (any EventLoop)?
    var session: WebSocketSession? { lock.withLock { _session } }
    var eventLoop: (any EventLoop)? { lock.withLock { _eventLoop } }
    func set(_ session: WebSocketSession) {
        lock.withLock {
            _session = session
            _eventLoop = session.eventLoop
        }
    }
}

/// Forwards a connection's messages into an `AsyncStream`.
final class StreamingApplication: WebSocketApplication {
    let continuation: AsyncStream<WebSocketClientConnection.Event>.Continuation
    let box: SessionBox

    init(continuation: AsyncStream<WebSocketClientConnection.Event>.Continuation, box: SessionBox) {
        self.continuation = continuation
        self.box = box
    }

    func connected(_ session: WebSocketSession) { box.set(session) }

    func received(_ message: WebSocketMessage, on session: WebSocketSession) {
        switch message {
        case .text(let bytes): continuation.yield(.text(String(buffer: bytes)))
        case .binary(let bytes): continuation.yield(.binary(bytes))
        }
    }

    func disconnected(_ session: WebSocketSession, code: WebSocketCloseCode?) {
        continuation.yield(.closed(code))
        continuation.finish()
    }
}
