import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore
import Prometheus

/// The routes of `checkmark serve`: the `/connect` WebSocket gateway, the operations endpoints and
/// the REST API.
struct CheckmarkRoutes: HTTPRoutes {
    let gateway: Gateway
    let rest: RESTAPI
    let registry: PrometheusCollectorRegistry?
    let readiness: @Sendable () -> Bool

    func isWebSocketPath(_ path: String) -> Bool { path == "/connect" }

    func webSocketApplication(for request: HTTPRequest, on eventLoop: any EventLoop) -> Result<any WebSocketApplication, HTTPResponseRejection> {
        let authentication = gateway.authenticator.authenticate(query: request.query, now: WallClock.now())
        return .success(GatewayConnection(eventLoop: eventLoop, gateway: gateway, authentication: authentication))
    }

    func respond(to request: HTTPRequest, on eventLoop: any EventLoop) -> EventLoopFuture<HTTPResponse> {
        switch (request.method, request.path) {
        case ("GET", "/healthz"):
            return eventLoop.makeSucceededFuture(.text(200, "ok"))
        case ("GET", "/readyz"):
            return eventLoop.makeSucceededFuture(readiness() ? .text(200, "ready") : .text(503, "not ready"))
        case ("GET", "/metrics"):
            guard let registry else { return eventLoop.makeSucceededFuture(.text(404, "metrics are disabled")) }
            var buffer = ByteBuffer()
            buffer.writeBytes(registry.emitToBuffer())
            return eventLoop.makeSucceededFuture(HTTPResponse(
                status: 200, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"], body: buffer))
        default:
            return rest.respond(to: request, on: eventLoop)
        }
    }
}
