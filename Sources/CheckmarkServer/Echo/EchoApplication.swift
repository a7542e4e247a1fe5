import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore

/// Sends every message back as it came: the endpoint conformance suites drive.
public final class EchoApplication: WebSocketApplication {
    public init() {}
    public func connected(_ session: WebSocketSession) {}
    public func received(_ message: WebSocketMessage, on session: WebSocketSession) {
        switch message {
        case .text(let bytes): session.send(text: bytes)
        case .binary(let bytes): session.send(binary: bytes)
        }
    }
    public func disconnected(_ session: WebSocketSession, code: WebSocketCloseCode?) {}
}

/// Routes for `checkmark echo`: every path is a WebSocket echo endpoint.
public struct EchoRoutes: HTTPRoutes {
    public init() {}
    public func isWebSocketPath(_ path: String) -> Bool { true }
    public func webSocketApplication(for request: HTTPRequest, on eventLoop: any EventLoop) -> Result<any WebSocketApplication, HTTPResponseRejection> {
        .success(EchoApplication())
    }
    public func respond(to request: HTTPRequest, on eventLoop: any EventLoop) -> EventLoopFuture<HTTPResponse> {
        eventLoop.makeSucceededFuture(.text(426, "WebSocket only", headers: ["Upgrade": "websocket", "Sec-WebSocket-Version": "13"]))
    }
}
