import CheckmarkCore
import CheckmarkWire
import NIOCore

/// The threads list (Stream's `QueryThreads`, `GetThread`), as the SDKs' thread managers read it.
extension RESTAPI {
    static let defaultThreadsPerQuery = 10
    static let maxThreadsPerQuery = 25
    static let defaultRepliesPerThread = 3
    static let maxRepliesPerThread = 100
    static let defaultParticipantsPerThread = 10
    static let maxParticipantsPerThread = 100

    /// `POST /threads`: the caller's threads (server tokens: `user_id`'s), newest activity first,
    /// `limit` (10, at most 25) a page, `next` from the previous page. Each with its channel, parent,
    /// `reply_limit` newest replies (3), `participant_limit` participants (10) and the read states the
    /// caller may see. With `watch` (Stream's SDKs send it) and a `connection_id`, that connection
    /// watches the page's channels.
    /// - Throws: 400 for a filter, a sort other than `last_message_at` descending, `prev`, or a
    ///   `next` that is not one this server gave; 404 unknown user.
    func queryThreads(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let viewer = try call.caller.requiredActor(named: try RESTCaller.named(in: call.body))
        if let filter = call.body["filter"], filter != .null, filter.objectValue?.isEmpty != true {
            throw .invalid("thread filters are not supported; query threads without filter")
        }
        try Self.checkThreadSort(call.body["sort"])
        if let prev = call.body["prev"], prev != .null { throw .invalid("prev is not supported; page forward with next") }
        let cursor = try RequestFields.optionalString(call.body, "next").map { token throws(WireError) -> ThreadCursor in
            guard let cursor = ThreadCursor(token: token) else { throw .invalid("next \(token) is not a cursor this server gave") }
            return cursor
        }
        let limit = try RequestFields.limit(call.body["limit"], field: "limit", default: Self.defaultThreadsPerQuery, max: Self.maxThreadsPerQuery)
        let limits = try Self.threadLimits(replies: call.body["reply_limit"], participants: call.body["participant_limit"])
        let watchConnection = try RequestFields.optionalBool(call.body, "watch") == true ? try call.connectionID() : nil
        let service = self.service
        let caller = call.caller
        return service.read { engine in
            try Self.checkOwner(of: watchConnection, caller: caller, engine: engine)
            return try engine.threads(of: viewer, after: cursor, limit: limit + 1)
        }
        .flatMap { found in
            let page = Array(found.prefix(limit))
            let next = found.count > limit ? page.last : nil
            return Self.watching(page.map(\.cid), with: watchConnection, service: service).flatMap {
                service.readChannelStates { engine, _, archived in
                    try ThreadStateJSON.threads(page, next: next, engine: engine, viewer: viewer, limits: limits, archived: archived)
                }
            }
        }
    }

    /// `GET /threads/{message_id}`: the thread of that parent message in a channel the caller may
    /// read (404 otherwise, as for a message), with `reply_limit` and `participant_limit` in the
    /// query; `watch=true` with a `connection_id` watches its channel.
    func getThread(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let parentID = call.parameters["message_id"] ?? ""
        let caller = call.caller
        let viewer = try caller.requiredActor(named: call.query["user_id"])
        let limits = try Self.threadLimits(replies: call.query["reply_limit"].map { .number(Double($0) ?? -1) },
                                           participants: call.query["participant_limit"].map { .number(Double($0) ?? -1) })
        let watchConnection = call.query["watch"] == "true" ? call.query["connection_id"] : nil
        let service = self.service
        return service.channels(holdingMessage: parentID).flatMap { stored in
            service.read { engine in
                try Self.checkOwner(of: watchConnection, caller: caller, engine: engine)
                let (channel, index) = try Self.locate(parentID, storedIn: stored, named: nil, caller: caller, engine: engine)
                guard !channel.messages.isReply(at: index) else {
                    throw WireError.invalid("message \(parentID) is a reply; a thread is named by its parent")
                }
                return channel.cid
            }
        }
        .flatMap { cid in Self.watching([cid], with: watchConnection, service: service).map { cid } }
        .flatMap { cid in
            service.readChannelStates { engine, _, archived in
                try ThreadStateJSON.thread(parentID, in: cid, engine: engine, viewer: viewer, limits: limits, archived: archived)
            }
        }
    }

    /// A user token may name only its own connections to watch with (403), as for a channel query.
    private static func checkOwner(of connection: String?, caller: RESTCaller, engine: ReceiptsEngine) throws(WireError) {
        if case .user(let user) = caller, let connection, let owner = engine.connections[connection], owner != user {
            throw .forbidden("connection \(connection) belongs to another user")
        }
    }

    /// Makes `connection` watch `cids` (each once), when there is one.
    private static func watching(_ cids: [ChannelCID], with connection: String?, service: ReceiptsService) -> EventLoopFuture<Void> {
        guard let connection else { return service.engineLoop.makeSucceededVoidFuture() }
        var seen: Set<ChannelCID> = []
        let watches = cids.filter { seen.insert($0).inserted }.map { service.submit(.watch(connectionID: connection, cid: $0)) }
        return EventLoopFuture.andAllSucceed(watches, on: service.engineLoop)
    }

    private static func threadLimits(replies: JSONValue?, participants: JSONValue?) throws(WireError) -> ThreadStateJSON.Limits {
        ThreadStateJSON.Limits(
            replies: try RequestFields.limit(replies, field: "reply_limit", default: defaultRepliesPerThread, max: maxRepliesPerThread),
            participants: try RequestFields.limit(participants, field: "participant_limit", default: defaultParticipantsPerThread,
                                                  max: maxParticipantsPerThread))
    }

    /// The one order threads are listed in: `last_message_at` descending (also when no sort is given).
    private static func checkThreadSort(_ sort: JSONValue?) throws(WireError) {
        guard let sort, sort != .null else { return }
        let entries: [JSONValue] = sort.arrayValue ?? [sort]
        for entry in entries {
            guard entry["field"]?.stringValue == "last_message_at", (entry["direction"]?.intValue ?? -1) == -1 else {
                throw .invalid("threads are listed by last_message_at descending only; sort \(entry.jsonText) is not supported")
            }
        }
    }
}
