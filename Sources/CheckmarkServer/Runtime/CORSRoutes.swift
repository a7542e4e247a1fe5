import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import CheckmarkWire
import Logging
import NIOCore

/// Routes wrapped in a ``CORSPolicy``: preflights are answered here (204, or 403 with the JSON error,
/// logged once as a refusal), and every other answer of the wrapped routes, errors included, gets the
/// policy's headers for the request's origin. WebSocket upgrades and the listener's own refusals pass
/// through unchanged.
struct CORSRoutes<Wrapped: HTTPRoutes>: HTTPRoutes {
    let wrapped: Wrapped
    let policy: CORSPolicy
    let refusals: RefusalLog

    func respond(to request: HTTPRequest, on eventLoop: any EventLoop) -> EventLoopFuture<HTTPResponse> {
        switch policy.decide(method: request.method, headers: request.headers) {
        case .preflight(let headers):
            return eventLoop.makeSucceededFuture(HTTPResponse(status: 204, headers: headers))
        case .refusePreflight(let reason):
            refusals.refused("cors_preflight", [
                "status": "403", "peer": "\(request.peer ?? "-")", "path": "\(request.path)", "reason": "\(reason)",
            ])
            return eventLoop.makeSucceededFuture(RESTAPI.error(.forbidden(reason), since: .now()))
        case .route(let adding):
            let answer = wrapped.respond(to: request, on: eventLoop)
            guard !adding.fields.isEmpty else { return answer }
            return answer.map { response in
                var response = response
                response.headers.fields.append(contentsOf: adding.fields)
                return response
            }
        }
    }

    func webSocketApplication(for request: HTTPRequest, on eventLoop: any EventLoop) -> Result<any WebSocketApplication, HTTPResponseRejection> {
        wrapped.webSocketApplication(for: request, on: eventLoop)
    }

    func isWebSocketPath(_ path: String) -> Bool { wrapped.isWebSocketPath(path) }

    func payloadTooLarge(limit: Int) -> HTTPResponse { wrapped.payloadTooLarge(limit: limit) }

    func refusal(status: Int, message: String) -> HTTPResponse { wrapped.refusal(status: status, message: message) }

    func refused(status: Int, message: String, peer: String) { wrapped.refused(status: status, message: message, peer: peer) }
}
