import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import CheckmarkWire
import Logging
import NIOCore
import Prometheus

/// The routes of `checkmark serve`: the `/connect` WebSocket gateway, the operations endpoints and
/// the REST API.
struct CheckmarkRoutes: HTTPRoutes {
    let gateway: Gateway
    let rest: RESTAPI
    let registry: PrometheusCollectorRegistry?
    let readiness: @Sendable () -> Bool
    let refusals: RefusalLog
    /// Where each answered request and upgrade is counted (`checkmark_http_requests_total`).
    let metrics: ServiceMetrics
    /// Where the access log goes (one `info` line per answered request) when ``accessLog`` is on.
    let logger: Logger
    let accessLog: Bool
    /// The demo page, when the `demo` setting serves it (`GET /demo`); otherwise `/demo` is 404.
    var demoPage: DemoPage? = nil

    func isWebSocketPath(_ path: String) -> Bool { path == "/connect" || path == Self.tracePath }

    /// The live trace's WebSocket endpoint (docs/replay.md).
    static let tracePath = "/admin/trace"

    func webSocketApplication(for request: HTTPRequest, on eventLoop: any EventLoop) -> Result<any WebSocketApplication, HTTPResponseRejection> {
        let started = NIODeadline.now()
        let result = upgrade(request, on: eventLoop)
        let route = request.path == Self.tracePath ? "trace" : "\(APIRoute.connect)"
        let status = switch result {
        case .success: 101
        case .failure(let rejection): rejection.response.status
        }
        metrics.answered(route: route, status: status, nanoseconds: (NIODeadline.now() - started).nanoseconds)
        return result
    }

    private func upgrade(_ request: HTTPRequest, on eventLoop: any EventLoop) -> Result<any WebSocketApplication, HTTPResponseRejection> {
        if request.path == Self.tracePath {
            if let refusal = TraceStreamConnection.refusal(query: request.query, authenticator: gateway.authenticator, now: WallClock.now()) {
                return .failure(HTTPResponseRejection(RESTAPI.error(refusal, since: .now())))
            }
            return .success(TraceStreamConnection(
                service: gateway.service, eventLoop: eventLoop,
                maxBufferedBytes: gateway.limits.maxOutboundBufferBytes * GatewayLimits.hardOutboundLimitFactor))
        }
        let authentication = gateway.authenticator.authenticate(query: request.query, now: WallClock.now())
        return .success(GatewayConnection(eventLoop: eventLoop, gateway: gateway, authentication: authentication,
                                           peer: request.peer ?? "-"))
    }

    /// Answers `request` with its request id in `X-Request-Id` (``RequestID``), counts it under its
    /// route's name (`unmatched` when no route serves the path or method) with its status and
    /// duration, and writes its access log line.
    func respond(to request: HTTPRequest, on eventLoop: any EventLoop) -> EventLoopFuture<HTTPResponse> {
        let started = NIODeadline.now()
        let requestID = RequestID.accept(request.headers.values(RequestID.header).first)
        let match = APIRoute.match(method: request.method, path: request.path)
        let route = switch match {
        case .found(let route, _): "\(route)"
        case .wrongMethod, .notFound: isDemoPage(request) ? DemoPage.routeName : ServiceMetrics.unmatchedRoute
        }
        let metrics = self.metrics
        let logger = accessLog ? self.logger : nil
        return answer(request, match, requestID: requestID, on: eventLoop).map { answer in
            let nanoseconds = (NIODeadline.now() - started).nanoseconds
            var response = answer.response
            response.headers.add(RequestID.header, requestID)
            metrics.answered(route: route, status: response.status, nanoseconds: nanoseconds)
            logger?.info("request", metadata: [
                "method": "\(request.method)", "route": "\(route)", "status": "\(response.status)",
                "duration_ms": "\(Double(nanoseconds / 10_000) / 100)", "bytes": "\(response.body.readableBytes)",
                "caller": "\(answer.caller?.logName ?? "-")", "request_id": "\(requestID)", "peer": "\(request.peer ?? "-")",
            ])
            return response
        }
    }

    private func answer(_ request: HTTPRequest, _ match: APIRoute.Match, requestID: String,
                        on eventLoop: any EventLoop) -> EventLoopFuture<RESTAPI.Answer> {
        if isDemoPage(request), let demoPage {
            return eventLoop.makeSucceededFuture(RESTAPI.Answer(response: demoPage.response, caller: nil))
        }
        switch match {
        case .found(.healthz, _), .found(.readyz, _), .found(.metrics, _), .wrongMethod, .notFound:
            return operations(request, match, on: eventLoop).map { RESTAPI.Answer(response: $0, caller: nil) }
        case .found(let route, let parameters):
            return rest.respond(to: request, route: route, parameters: parameters, requestID: requestID, on: eventLoop)
        }
    }

    /// `GET /demo` while the `demo` setting serves the page.
    private func isDemoPage(_ request: HTTPRequest) -> Bool {
        demoPage != nil && request.method == "GET" && request.path == DemoPage.path
    }

    private func operations(_ request: HTTPRequest, _ match: APIRoute.Match, on eventLoop: any EventLoop) -> EventLoopFuture<HTTPResponse> {
        switch match {
        case .found(.healthz, _):
            return eventLoop.makeSucceededFuture(.text(200, "ok"))
        case .found(.readyz, _):
            return eventLoop.makeSucceededFuture(readiness() ? .text(200, "ready") : .text(503, "not ready"))
        case .found(.metrics, _):
            guard let registry else { return eventLoop.makeSucceededFuture(.text(404, "metrics are disabled")) }
            var buffer = ByteBuffer()
            buffer.writeBytes(registry.emitToBuffer())
            if let process = ProcessStatistics.read(countingDescriptors: true) { buffer.writeString(process.prometheusText) }
            return eventLoop.makeSucceededFuture(HTTPResponse(
                status: 200, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"], body: buffer))
        case .found(let route, _):
            return eventLoop.makeSucceededFuture(RESTAPI.error(.notFound("\(route.template) is not an operations route"), since: .now()))
        case .wrongMethod(let allowed):
            if let unserved = UnservedStreamRoute.match(method: request.method, path: request.path) {
                return eventLoop.makeSucceededFuture(RESTAPI.error(unserved.error, since: .now()))
            }
            var response = RESTAPI.error(.methodNotAllowed(request.method, path: request.path, allowed: allowed), since: .now())
            response.headers.add("Allow", allowed.joined(separator: ", "))
            return eventLoop.makeSucceededFuture(response)
        case .notFound:
            if let unserved = UnservedStreamRoute.match(method: request.method, path: request.path) {
                return eventLoop.makeSucceededFuture(RESTAPI.error(unserved.error, since: .now()))
            }
            return eventLoop.makeSucceededFuture(RESTAPI.error(.notFound("no route for \(request.method) \(request.path)"), since: .now()))
        }
    }

    func payloadTooLarge(limit: Int) -> HTTPResponse {
        RESTAPI.error(.payloadTooLarge(limit: limit), since: .now())
    }

    func refusal(status: Int, message: String) -> HTTPResponse {
        RESTAPI.error(WireError.listenerRefusal(status: status, message: message), since: .now())
    }

    func refused(status: Int, message: String, peer: String) {
        metrics.refusedByListener(status: status)
        refusals.refused(message, ["status": "\(status)", "peer": "\(peer)"])
    }
}
