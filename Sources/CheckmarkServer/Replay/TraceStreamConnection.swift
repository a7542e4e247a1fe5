import CheckmarkCore
import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import CheckmarkWire
import NIOCore

/// `GET /admin/trace`: streams the live trace of a running server (docs/replay.md), one text message
/// per trace line, from the moment it connects. Needs the api_key and a server token
/// (`authorization` query parameter), checked before the upgrade (401 otherwise). A reader that
/// falls too far behind is closed with 4009; the server never waits for it.
final class TraceStreamConnection: WebSocketApplication {
    private let service: ReceiptsService
    private let eventLoop: any EventLoop
    private let maxBufferedBytes: Int
    private let id = GatewayConnection.makeConnectionID()
    private var session: WebSocketSession?

    init(service: ReceiptsService, eventLoop: any EventLoop, maxBufferedBytes: Int) {
        self.service = service
        self.eventLoop = eventLoop
        self.maxBufferedBytes = maxBufferedBytes
    }

    /// Checks the query of the upgrade request: nil when it may stream, else the error to answer
    /// (401 for a missing or wrong key or token, 403 for a user token).
    static func refusal(query: [String: String], authenticator: GatewayAuthenticator, now: Timestamp) -> WireError? {
        do {
            try RESTCaller.authenticate(
                apiKey: query["api_key"], token: query["authorization"], tokenSource: "the authorization parameter",
                apiKey: authenticator.apiKey, apiSecret: authenticator.apiSecret, now: now,
                clockSkewSeconds: authenticator.tokenClockSkewSeconds
            ).requireServer("the live trace")
            return nil
        } catch {
            return error
        }
    }

    func connected(_ session: WebSocketSession) {
        self.session = session
        let box = UnsafeTransfer(self)
        service.addTraceSubscriber(TraceSubscriber(id: id, eventLoop: eventLoop) { lines in
            box.wrappedValue.send(lines)
        })
    }

    private func send(_ lines: [[UInt8]]) {
        guard let session else { return }
        if session.bufferedOutboundBytes > maxBufferedBytes {
            session.close(code: WebSocketCloseCode(.slowConsumer), reason: "trace reader too far behind")
            return
        }
        for line in lines {
            var buffer = ByteBuffer()
            buffer.writeBytes(line)
            _ = session.send(text: buffer)
        }
    }

    func received(_ message: WebSocketMessage, on session: WebSocketSession) {}

    func disconnected(_ session: WebSocketSession, code: WebSocketCloseCode?) {
        self.session = nil
        service.removeTraceSubscriber(id: id)
    }
}
