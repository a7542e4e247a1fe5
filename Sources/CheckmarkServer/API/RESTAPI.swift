import CheckmarkAuth
import CheckmarkCore
import CheckmarkWebSocket
import CheckmarkWire
import Logging
import NIOCore

/// The Stream-compatible REST API (contract: Stream-compatible interface; every route in
/// ``APIRoute`` and `docs/openapi.json`). Every request carries `?api_key=` and `Authorization: <JWT>`
/// (a server token `{"server": true}`, or a user token whose `user_id` acts, see ``RESTCaller``).
/// Answers are Stream's JSON shapes with `duration`; errors are `{code, message, StatusCode, duration}`
/// with the status from ``WireError``.
struct RESTAPI: Sendable {
    let service: ReceiptsService
    let apiKey: String
    let apiSecret: String
    /// What a request body's JSON may hold (400 past it).
    var jsonLimits: JSONLimits = .default
    /// Each user token's request rate (429 past it).
    var rateLimiter = RESTRateLimiter(rate: 100, burst: 200)
    /// Each user's typing and custom events, all its connections together: `channel_events_per_second`,
    /// `channel_event_burst` (429 past it).
    var eventRateLimiter = RESTRateLimiter(rate: 10, burst: 20)
    /// Largest custom event, in bytes (`max_custom_event`; 400 past it).
    var maxCustomEventBytes = 5 << 10
    /// Where refused requests are logged (rate-limited).
    var refusals: RefusalLog?
    /// Where refused credentials are counted.
    var metrics: ServiceMetrics?
    /// How far ahead of the server's clock a token's `nbf` and `iat` may lie (`token_clock_skew`).
    var tokenClockSkewSeconds = JWT.defaultClockSkewSeconds

    /// One parsed request: who calls, the route's path parameters, the query and the JSON body.
    struct Call: Sendable {
        var caller: RESTCaller
        var parameters: [String: String]
        var query: [String: String]
        var body: JSONValue
        /// The client connection a channel query should make watch: `?connection_id=` (Stream's clients)
        /// or `connection_id` in the body.
        func connectionID() throws(WireError) -> String? {
            if let id = query["connection_id"] { return id }
            return try RequestFields.optionalString(body, "connection_id")
        }

        /// The channel `?cid=` names (`type:id`), if any: the one of the caller's channels a message id
        /// is looked for in.
        func namedCID() throws(WireError) -> ChannelCID? {
            guard let text = query["cid"] else { return nil }
            guard let cid = ChannelCID(text) else { throw .invalid("cid must be type:id, not \(text)") }
            return cid
        }

        /// The call with the JSON of `?payload=` as its body: Stream's iOS SDK queries channels with
        /// `GET /channels?payload=...`. - Throws: 400 when the payload is missing or not a JSON object.
        /// The payload is held to the same JSON limits as a body.
        func withPayloadAsBody(limits: JSONLimits) throws(WireError) -> Call {
            guard let text = query["payload"] else { throw .invalid("GET /channels needs ?payload= (the query as JSON), or use POST") }
            let payload: JSONValue
            do { payload = try JSONParser.parse(Array(text.utf8), limits: limits) } catch {
                throw .invalid(error.limit == nil ? "payload is not valid JSON: \(error.description)" : "payload is refused: \(error.description)")
            }
            guard case .object = payload else { throw .invalid("payload must be a JSON object") }
            var call = self
            call.body = payload
            return call
        }

        /// The `{type}/{id}` of the path.
        func cid() throws(WireError) -> ChannelCID {
            try RequestFields.cid(type: parameters["type"] ?? "", id: parameters["id"] ?? "")
        }
    }

    /// A response and who asked for it (nil when the credentials were refused), for the access log.
    struct Answer: Sendable {
        var response: HTTPResponse
        var caller: RESTCaller?
    }

    /// Answers one REST request; refusals are logged with `requestID`.
    func respond(to request: HTTPRequest, route: APIRoute, parameters: [String: String], requestID: String,
                 on eventLoop: any EventLoop) -> EventLoopFuture<Answer> {
        let started = NIODeadline.now()
        let call: Call
        let future: EventLoopFuture<[UInt8]>
        let refusals = self.refusals
        let refused: @Sendable (WireError, RESTCaller?) -> Void = { error, caller in
            refusals?.refused(error.code, [
                "status": "\(error.httpStatus)", "route": "\(request.method) \(route.template)",
                "caller": "\(caller.map { "\($0)" } ?? "-")", "message": "\(error.message)", "request_id": "\(requestID)",
                "peer": "\(request.peer ?? "-")",
            ])
        }
        var caller: RESTCaller?
        do throws(WireError) {
            let authenticated = try authenticate(request)
            caller = authenticated
            guard rateLimiter.admit(authenticated) else {
                throw WireError.rateLimited("more than \(rateLimiter.rate) requests a second from one user; slow down")
            }
            call = Call(caller: authenticated, parameters: parameters, query: request.query, body: try Self.body(of: request, limits: jsonLimits))
            future = try handle(route, call)
        } catch {
            refused(error, caller)
            return eventLoop.makeSucceededFuture(Answer(response: Self.error(error, since: started), caller: caller))
        }
        let known = caller
        return future.hop(to: eventLoop)
            .map { Answer(response: Self.ok($0, since: started, status: route.successStatus), caller: known) }
            .recover { failure in
                let error = WireError(any: failure)
                refused(error, known)
                return Answer(response: Self.error(error, since: started), caller: known)
            }
    }

    private func handle(_ route: APIRoute, _ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        switch route {
        case .upsertUsers: try upsertUsers(call)
        case .updateUsersPartial: try updateUsersPartial(call)
        case .createChannelType: try createChannelType(call)
        case .listChannelTypes: try listChannelTypes(call)
        case .getChannelType: try getChannelType(call)
        case .updateChannelType: try updateChannelType(call)
        case .queryChannels: try queryChannels(call)
        case .queryChannelsByGet: try queryChannels(call.withPayloadAsBody(limits: jsonLimits))
        case .queryChannel, .queryDistinctChannel: try queryChannel(call)
        case .updateChannel: try updateChannel(call)
        case .sendMessage: try sendMessage(call)
        case .markRead: try markRead(call)
        case .markUnread: try markUnread(call)
        case .markAllRead: try markAllRead(call)
        case .markDelivered: try markDelivered(call)
        case .stopWatching: try stopWatching(call)
        case .messageReceipts: try messageReceipts(call)
        case .sendEvent: try sendEvent(call)
        case .replies: try replies(call)
        case .getMessage: try getMessage(call)
        case .updateMessage: try updateMessage(call)
        case .updateMessagePartial: try updateMessagePartial(call)
        case .deleteMessage: try deleteMessage(call)
        case .sendReaction: try sendReaction(call)
        case .deleteReaction: try deleteReaction(call)
        case .getReactions: try getReactions(call)
        case .queryThreads: try queryThreads(call)
        case .getThread: try getThread(call)
        case .unreadCounts: try unreadCounts(call)
        case .connect, .healthz, .readyz, .metrics: throw .notFound("\(route.template) is not a REST route")
        }
    }

    private func authenticate(_ request: HTTPRequest) throws(WireError) -> RESTCaller {
        if let type = request.headers.values("stream-auth-type").first, type != "jwt" {
            metrics?.authenticationFailed(.tokenInvalid)
            throw .unauthenticated("stream-auth-type \(type) is not supported; use jwt")
        }
        switch RESTCaller.check(
            apiKey: request.query["api_key"], token: request.headers.values("Authorization").first,
            tokenSource: "the Authorization header", apiKey: apiKey, apiSecret: apiSecret, now: WallClock.now(),
            clockSkewSeconds: tokenClockSkewSeconds) {
        case .success(let caller): return caller
        case .failure(let failure):
            metrics?.authenticationFailed(failure.reason)
            throw failure.error
        }
    }

    private static func body(of request: HTTPRequest, limits: JSONLimits) throws(WireError) -> JSONValue {
        guard request.body.readableBytes > 0 else { return .object([]) }
        let json: JSONValue
        do { json = try JSONParser.parse(request.body.readableBytesView, limits: limits) } catch {
            throw .invalid(error.limit == nil ? "the body is not valid JSON: \(error.description)" : "the body is refused: \(error.description)")
        }
        guard case .object = json else { throw .invalid("the body must be a JSON object") }
        return json
    }

    // MARK: Responses

    /// A 200 (or `status`) with `json` (an object) and `duration` added.
    static func ok(_ json: [UInt8], since started: NIODeadline, status: Int = 200) -> HTTPResponse {
        var buffer = ByteBuffer()
        buffer.writeBytes(json.dropLast())
        if json.count > 2 { buffer.writeStaticString(",") }
        buffer.writeString(#""duration":"\#(duration(since: started))"}"#)
        return .json(status, buffer)
    }

    static func error(_ error: WireError, since started: NIODeadline) -> HTTPResponse {
        var buffer = ByteBuffer()
        buffer.writeBytes(error.body(duration: duration(since: started)))
        return .json(error.httpStatus, buffer)
    }

    /// Stream's `duration`: milliseconds with two decimals, e.g. `0.42ms`.
    static func duration(since started: NIODeadline) -> String {
        let hundredths = max(0, (NIODeadline.now() - started).nanoseconds / 10_000)
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)ms"
    }

    /// `{}`: the answer of calls that return nothing but `duration`.
    static let emptyObject: [UInt8] = Array("{}".utf8)
}
