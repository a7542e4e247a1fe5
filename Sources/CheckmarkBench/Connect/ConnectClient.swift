import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore

/// A connection of the `connect` scenario: records the time from starting the TCP connect to the
/// first `health.check` (the server authenticated it and registered it), then stays idle.
final class ConnectClient: WebSocketApplication, @unchecked Sendable {
    let started: UInt64
    let recorder: LoopRecorder
    let onReady: @Sendable (Bool) -> Void
    private var session: WebSocketSession?
    private var seen = false

    init(started: UInt64, recorder: LoopRecorder, onReady: @escaping @Sendable (Bool) -> Void) {
        self.started = started
        self.recorder = recorder
        self.onReady = onReady
    }

    func connected(_ session: WebSocketSession) { self.session = session }

    func received(_ message: WebSocketMessage, on session: WebSocketSession) {
        guard !seen, case .text(let buffer) = message else { return }
        seen = true
        let ok = buffer.withUnsafeReadableBytes { EventScan($0).kind == .healthCheck }
        if ok {
            recorder.record(.connect, nanoseconds: BenchClock.now() - started)
            recorder.count(.connectionsOpened)
        } else {
            recorder.count(.errors)
        }
        onReady(ok)
    }

    func disconnected(_ session: WebSocketSession, code: WebSocketCloseCode?) {
        self.session = nil
        if !seen { onReady(false) }
    }

    func close() { session?.close(code: .normalClosure) }
}
