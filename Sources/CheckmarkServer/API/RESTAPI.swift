import CheckmarkAuth
import CheckmarkCore
import CheckmarkWebSocket
import NIOCore

/// The Stream-compatible REST subset served so far (contract: Stream-compatible interface): users,
/// channel types, channel create/query with members, messages, and the confirmations. Every request
/// carries `?api_key=` and `Authorization: <JWT>` (a server token `{"server": true}`, or a user token
/// whose `user_id` acts). Errors are Stream's JSON `{code, message, StatusCode, duration}`.
struct RESTAPI: Sendable {
    let service: ReceiptsService
    let apiKey: String
    let apiSecret: String

    /// Who is calling.
    enum Caller {
        case server
        case user(String)
    }

    func respond(to request: HTTPRequest, on eventLoop: any EventLoop) -> EventLoopFuture<HTTPResponse> {
        let caller: Caller
        switch authenticate(request) {
        case .failure(let error): return eventLoop.makeSucceededFuture(Self.error(error))
        case .success(let value): caller = value
        }
        let body: JSONValue
        if request.body.readableBytes == 0 {
            body = .object([])
        } else {
            do { body = try JSONParser.parse(request.body.readableBytesView) } catch {
                return eventLoop.makeSucceededFuture(Self.error(.invalid("body is not valid JSON: \(error.description)")))
            }
        }
        let future: EventLoopFuture<[UInt8]>
        do throws(WireError) {
            future = try route(request, body: body, caller: caller)
        } catch {
            return eventLoop.makeSucceededFuture(Self.error(error))
        }
        return future.hop(to: eventLoop).map { Self.ok($0) }.recover { Self.error(WireError(any: $0)) }
    }

    private func authenticate(_ request: HTTPRequest) -> Result<Caller, WireError> {
        guard request.query["api_key"] == apiKey else { return .failure(.unauthenticated("api_key is missing or unknown")) }
        guard let token = request.headers.values("Authorization").first, !token.isEmpty else {
            return .failure(.unauthenticated("the Authorization header (a JWT) is required"))
        }
        do {
            let claims = try JWT.verify(token, secret: apiSecret, now: WallClock.now())
            if claims["server"]?.boolValue == true { return .success(.server) }
            if let user = claims["user_id"]?.stringValue { return .success(.user(user)) }
            return .failure(.unauthenticated("the token has neither server nor user_id"))
        } catch {
            return .failure(WireError(any: error))
        }
    }

    private func route(_ request: HTTPRequest, body: JSONValue, caller: Caller) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let parts = request.path.split(separator: "/").map(String.init)
        switch (request.method, parts.count, parts.first) {
        case ("POST", 1, "users"):
            try requireServer(caller)
            guard let users = body["users"]?.objectValue else { throw .invalid("users must be an object of id to user") }
            var futures: [EventLoopFuture<ReceiptsOutcome>] = []
            for (id, value) in users {
                let details = (value.objectValue ?? []).filter { $0.0 != "id" }
                guard let user = ResultJSON.user(id: id, details: details) else { throw .invalid("bad user \(id)") }
                futures.append(service.submit(.upsertUser(user)))
            }
            return EventLoopFuture.whenAllSucceed(futures, on: service.engineLoop).map { outcomes in
                var w = JSONWriter()
                w.beginObject()
                w.key("users")
                w.beginObject()
                for outcome in outcomes {
                    if case .user(let user) = outcome.result {
                        w.key(user.id)
                        StreamJSON.write(user: user, into: &w, includePrivacy: true)
                    }
                }
                w.endObject()
                w.endObject()
                return w.bytes
            }
        case ("POST", 1, "channeltypes"):
            try requireServer(caller)
            guard let name = body["name"]?.stringValue else { throw .invalid("name is required") }
            let type = ChannelType(name: name, readEvents: body["read_events"]?.boolValue ?? true,
                                   deliveryEvents: body["delivery_events"]?.boolValue ?? false)
            return service.submit(.createChannelType(type)).map { _ in Self.object([("name", .string(name))]) }
        case ("PUT", 2, "channeltypes"):
            try requireServer(caller)
            return service.submit(.updateChannelType(name: parts[1], readEvents: body["read_events"]?.boolValue,
                                                     deliveryEvents: body["delivery_events"]?.boolValue))
                .map { _ in Self.object([("name", .string(parts[1]))]) }
        case ("POST", 4, "channels") where parts[3] == "query":
            let cid = try Self.cid(parts[1], parts[2])
            let acting = try actingUser(caller, body: body)
            let data = body["data"]
            let members = try Self.strings(data?["members"] ?? body["members"])
            let createdBy = data?["created_by_id"]?.stringValue ?? data?["created_by"]?["id"]?.stringValue ?? acting
            let connectionID = request.query["connection_id"]
            let watch = body["watch"]?.boolValue == true
            let service = self.service
            return service.submit(.createChannel(cid: cid, createdBy: createdBy, members: members))
                .flatMap { outcome -> EventLoopFuture<ReceiptsOutcome> in
                    guard watch, let connectionID else { return service.engineLoop.makeSucceededFuture(outcome) }
                    return service.submit(.watch(connectionID: connectionID, cid: cid))
                }
                .flatMap { _ in
                    service.read { engine in try ResultJSON.channelState(engine: engine, cid: cid, viewer: acting ?? "") }
                }
        case ("POST", 3, "channels"):
            try requireServer(caller)
            let cid = try Self.cid(parts[1], parts[2])
            var future = service.engineLoop.makeSucceededFuture(ReceiptsOutcome.unchanged)
            let service = self.service
            if let add = body["add_members"] {
                let ids = try Self.strings(add)
                future = future.flatMap { _ in service.submit(.addMembers(cid: cid, userIDs: ids)) }
            }
            if let remove = body["remove_members"] {
                let ids = try Self.strings(remove)
                future = future.flatMap { _ in service.submit(.removeMembers(cid: cid, userIDs: ids)) }
            }
            return future.map { _ in Self.object([("cid", .string(cid.description))]) }
        case ("POST", 4, "channels") where parts[3] == "message":
            let cid = try Self.cid(parts[1], parts[2])
            guard let message = body["message"], let text = message["text"]?.stringValue else { throw .invalid("message.text is required") }
            guard let userID = try actingUser(caller, body: message) else { throw .invalid("message.user_id is required for server-side calls") }
            let draft = MessageDraft(id: message["id"]?.stringValue, text: text,
                                     kind: message["type"]?.stringValue == "system" ? .system : .regular,
                                     parentID: message["parent_id"]?.stringValue,
                                     showInChannel: message["show_in_channel"]?.boolValue ?? false,
                                     silent: message["silent"]?.boolValue ?? false)
            return service.submit(.sendMessage(cid: cid, userID: userID, draft: draft)).map(ResultJSON.message)
        case ("POST", 4, "channels") where parts[3] == "read":
            let cid = try Self.cid(parts[1], parts[2])
            guard let userID = try actingUser(caller, body: body) else { throw .invalid("user_id is required for server-side calls") }
            return service.submit(.markRead(cid: cid, userID: userID, messageID: body["message_id"]?.stringValue)).map { _ in Self.emptyObject }
        case ("POST", 2, "channels") where parts[1] == "delivered":
            guard let userID = try actingUser(caller, body: body, query: request.query) else { throw .invalid("user_id is required for server-side calls") }
            guard let list = body["latest_delivered_messages"]?.arrayValue else { throw .invalid("latest_delivered_messages is required") }
            let latest = try list.map { (entry) throws(WireError) -> DeliveredTarget in
                guard let text = entry["cid"]?.stringValue, let cid = ChannelCID(text), let id = entry["id"]?.stringValue else {
                    throw .invalid("each entry needs cid and id")
                }
                return DeliveredTarget(cid: cid, messageID: id)
            }
            return service.submit(.markDelivered(userID: userID, latest: latest)).map { _ in Self.emptyObject }
        default:
            throw .notFound("no route for \(request.method) \(request.path)")
        }
    }

    private func requireServer(_ caller: Caller) throws(WireError) {
        guard case .server = caller else { throw .forbidden("this call needs a server token") }
    }

    /// The user a call acts for: the token's user, or for server tokens `user_id` / `user.id` in the body.
    private func actingUser(_ caller: Caller, body: JSONValue?, query: [String: String] = [:]) throws(WireError) -> String? {
        switch caller {
        case .user(let id): return id
        case .server: return body?["user_id"]?.stringValue ?? body?["user"]?["id"]?.stringValue ?? query["user_id"]
        }
    }

    private static func cid(_ type: String, _ id: String) throws(WireError) -> ChannelCID {
        guard let cid = ChannelCID("\(type):\(id)") else { throw .invalid("\(type):\(id) is not a valid channel cid") }
        return cid
    }

    private static func strings(_ value: JSONValue?) throws(WireError) -> [String] {
        guard let value else { return [] }
        guard let array = value.arrayValue else { throw .invalid("members must be an array of user ids") }
        return try array.map { (element) throws(WireError) -> String in
            if let id = element.stringValue ?? element["user_id"]?.stringValue { return id }
            throw .invalid("members must be user ids or {user_id}")
        }
    }

    private static let emptyObject: [UInt8] = Array(#"{"duration":"0.00ms"}"#.utf8)

    private static func object(_ pairs: [(String, JSONValue)]) -> [UInt8] {
        var w = JSONWriter()
        w.value(.object(pairs + [("duration", .string("0.00ms"))]))
        return w.bytes
    }

    static func ok(_ json: [UInt8]) -> HTTPResponse {
        var buffer = ByteBuffer()
        buffer.writeBytes(json)
        return .json(200, buffer)
    }

    static func error(_ error: WireError) -> HTTPResponse {
        var w = JSONWriter()
        error.write(into: &w)
        var buffer = ByteBuffer()
        buffer.writeBytes(w.bytes)
        return .json(error.httpStatus, buffer)
    }
}
