import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore

/// What the HTTP listener does with each request: upgrade it to a WebSocket served by an application,
/// or answer it.
package protocol HTTPRoutes: Sendable {
    /// Called on the connection's event loop for a request head that asks to upgrade. Returns the
    /// application that will serve the connection, or a response refusing it.
    func webSocketApplication(for request: HTTPRequest, on eventLoop: any EventLoop) -> Result<any WebSocketApplication, HTTPResponseRejection>

    /// Whether the path is a WebSocket endpoint (a plain request there gets 426).
    func isWebSocketPath(_ path: String) -> Bool

    /// Answers a plain request.
    func respond(to request: HTTPRequest, on eventLoop: any EventLoop) -> EventLoopFuture<HTTPResponse>

    /// The 413 answer to a request whose body is over `limit` bytes.
    func payloadTooLarge(limit: Int) -> HTTPResponse

    /// The answer to a request refused before it reached a route: 400 (not HTTP, bad framing), 408
    /// (not received in time), 503 (too many connections waiting).
    func refusal(status: Int, message: String) -> HTTPResponse

    /// Told of each refusal the listener makes itself (to log it), with the peer's address.
    func refused(status: Int, message: String, peer: String)
}

extension HTTPRoutes {
    package func payloadTooLarge(limit: Int) -> HTTPResponse {
        .text(413, "request body larger than \(limit) bytes")
    }

    package func refusal(status: Int, message: String) -> HTTPResponse {
        .text(status, message)
    }

    package func refused(status: Int, message: String, peer: String) {}
}

/// A refusal to upgrade, answered as this HTTP response.
package struct HTTPResponseRejection: Error, Sendable {
    package var response: HTTPResponse
    package init(_ response: HTTPResponse) { self.response = response }
}
