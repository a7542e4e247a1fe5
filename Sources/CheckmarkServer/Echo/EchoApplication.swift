import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore

/// Sends every message back as it came: the endpoint conformance suites drive.
package final class EchoApplication: WebSocketApplication {
    package init() {}
    package func connected(_ session: WebSocketSession) {}
    package func received(_ message: WebSocketMessage, on session: WebSocketSession) {
        switch message {
        case .text(let bytes): session.send(text: bytes)
        case .binary(let bytes): session.send(binary: bytes)
        }
    }
    package func disconnected(_ session: WebSocketSession, code: WebSocketCloseCode?) {}
}

/// Routes for `checkmark echo`: every path is a WebSocket echo endpoint.
package struct EchoRoutes: HTTPRoutes {
    package init() {}
    package func isWebSocketPath(_ path: String) -> Bool { true }
    package func webSocketApplication(for request: HTTPRequest, on eventLoop: any EventLoop) -> Result<any WebSocketApplication, HTTPResponseRejection> {
        .success(EchoApplication())
    }
    package func respond(to request: HTTPRequest, on eventLoop: any EventLoop) -> EventLoopFuture<HTTPResponse> {
        eventLoop.makeSucceededFuture(.text(426, "WebSocket only", headers: ["Upgrade": "websocket", "Sec-WebSocket-Version": "13"]))
    }
}
