import CheckmarkAuth
import CheckmarkCore
import CheckmarkWire
import NIOCore

/// Channels: get-or-create with state (`/query`), member changes, and query channels.
extension RESTAPI {
    /// Most channels one query channels call returns (Stream's limit as well), and the default.
    static let maxChannelsPerQuery = 30
    static let defaultChannelsPerQuery = 10

    /// `POST /channels/{type}/{id}/query` (or `/channels/{type}/query`: the id is derived from the
    /// members, Stream's distinct channels). Creates the channel when it does not exist
    /// (`data.members`, `data.created_by_id` / `data.created_by.id`), then answers its state as the
    /// acting user sees it. With `watch: true` and a `connection_id` (query or body) that connection starts watching.
    /// A user token must be a member (or, when creating, be among the members): 403 otherwise.
    func queryChannel(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let data = call.body["data"]
        var members = try RequestFields.userIDs(data?["members"], field: "data.members")
        let creator = try RequestFields.optionalString(data, "created_by_id") ?? data?["created_by"]?["id"]?.stringValue
        let acting = try call.caller.actor(named: try RESTCaller.named(in: call.body) ?? creator)
        let cid: ChannelCID
        if call.parameters["id"] != nil {
            cid = try call.cid()
            guard !cid.id.hasPrefix(Self.distinctPrefix) else {
                throw .invalid("channel ids starting with \(Self.distinctPrefix) are reserved for distinct channels; query /channels/{type}/query with data.members")
            }
        } else {
            guard members.count >= 2 else { throw .invalid("a channel without an id needs at least two data.members") }
            cid = try RequestFields.cid(type: call.parameters["type"] ?? "", id: Self.distinctID(members: members))
        }
        if let acting, case .user = call.caller, !members.isEmpty, !members.contains(acting) {
            members.append(acting)
        }
        let initialMembers = members
        let messages = try MessagePagination.parse(call.body["messages"], prefix: "messages.",
                                                   defaultLimit: ResultJSON.defaultMessageLimit, maxLimit: ResultJSON.maxMessageLimit)
        let watchConnection = try RequestFields.optionalBool(call.body, "watch") == true ? try call.connectionID() : nil
        let caller = call.caller
        let service = self.service
        let viewer = acting ?? ""
        return service.read { engine throws(WireError) in
            let listing = engine.listing(of: cid)
            let exists = listing != nil
            if case .user(let user) = caller {
                if let listing, !listing.hasMember(user) { throw .forbidden("\(user) is not a member of \(cid)") }
                if !exists, !initialMembers.contains(user) { throw .forbidden("\(user) may create \(cid) only as one of its members") }
                if let watchConnection, let owner = engine.connections[watchConnection], owner != user {
                    throw .forbidden("connection \(watchConnection) belongs to another user")
                }
            }
            return exists
        }
        .flatMap { exists -> EventLoopFuture<ReceiptsOutcome> in
            exists ? service.engineLoop.makeSucceededFuture(.unchanged)
                : service.submit(.createChannel(cid: cid, createdBy: creator ?? acting, members: initialMembers))
        }
        .flatMap { _ -> EventLoopFuture<ReceiptsOutcome> in
            guard let watchConnection else { return service.engineLoop.makeSucceededFuture(.unchanged) }
            return service.submit(.watch(connectionID: watchConnection, cid: cid))
        }
        .flatMap { _ in
            service.readChannelStates { engine, fragments, archived in
                // Checked again where the answer is read: the channel may have been created meanwhile
                // by another caller, without this user (creation and this check are not one step).
                if case .user(let user) = caller, engine.listing(of: cid)?.hasMember(user) != true {
                    throw WireError.forbidden("\(user) is not a member of \(cid)")
                }
                return try ResultJSON.channelState(engine: engine, cid: cid, viewer: viewer, messages: messages,
                                                   watcherCount: service.clusterWatcherCount(cid), fragments: &fragments, archived: archived)
            }
        }
    }

    /// Ids of distinct channels start with this; no other channel may take such an id (400), so
    /// that a distinct channel's identity is its member set and nobody can claim it first.
    static let distinctPrefix = "!members-"

    /// Stream's distinct-channel id for a member list: ``distinctPrefix`` and the SHA-256 (first 128
    /// bits, hex) of the distinct sorted ids, each length-prefixed so that no two sets share an
    /// encoding; the same for the same members in any order, and infeasible to collide.
    static func distinctID(members: [String]) -> String {
        var encoded: [UInt8] = []
        for id in Set(members).sorted() {
            encoded += Array(String(id.utf8.count).utf8) + [UInt8(ascii: ":")] + Array(id.utf8) + [UInt8(ascii: ",")]
        }
        return distinctPrefix + SHA256Digest.hex(encoded).prefix(32)
    }

    /// `POST /channels/{type}/{id}`: `add_members` and `remove_members` (server token), optionally with a
    /// `message` posted after the change. Other channel updates are refused with `invalid_argument`.
    func updateChannel(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        try call.caller.requireServer("changing a channel's members")
        let cid = try call.cid()
        let supported: Set<String> = ["add_members", "remove_members", "message", "hide_history", "user_id", "user"]
        if let unsupported = call.body.objectValue?.first(where: { !supported.contains($0.0) && $0.1 != .null }) {
            throw .invalid("channel update \(unsupported.0) is not supported; Checkmark supports add_members and remove_members")
        }
        // Stream hides the history from members added with hide_history; Checkmark does not, so it says so.
        if try RequestFields.optionalBool(call.body, "hide_history") == true {
            throw .invalid("hide_history is not supported: members added to a channel see its history")
        }
        var commands: [ReceiptsCommand] = []
        if call.body["add_members"] != nil {
            commands.append(.addMembers(cid: cid, userIDs: try RequestFields.userIDs(call.body["add_members"], field: "add_members")))
        }
        if call.body["remove_members"] != nil {
            commands.append(.removeMembers(cid: cid, userIDs: try RequestFields.userIDs(call.body["remove_members"], field: "remove_members")))
        }
        if commands.isEmpty { throw .invalid("a channel update needs add_members or remove_members") }
        if let message = call.body["message"], message != .null {
            let inMessage = try RESTCaller.named(in: message)
            let inBody = try RESTCaller.named(in: call.body)
            guard let author = inMessage ?? inBody else { throw .invalid("message.user_id (or message.user.id) is required") }
            commands.append(.sendMessage(cid: cid, userID: author, draft: try RequestFields.draft(message)))
        }
        let service = self.service
        return submitAll(commands).flatMap { _ in
            service.read { engine in
                RESTResultJSON.channelWithMembers(try engine.channel(cid), engine: engine)
            }
        }
    }

    /// `POST /channels`: the acting user's channels matching `filter_conditions` (see ``ChannelFilter``),
    /// in `sort` order (``ChannelOrder``), `limit` (at most ``maxChannelsPerQuery``) from `offset`, each
    /// with its state as that user sees it. A user token sees only channels it is a member of; a
    /// server-side call must name the user (`user_id`). With `watch: true` and a `connection_id` the
    /// connection starts watching every channel returned.
    func queryChannels(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let viewer = try call.caller.requiredActor(named: try RESTCaller.named(in: call.body))
        let filter = try ChannelFilter(parsing: call.body["filter_conditions"] ?? .object([]))
        let order = try ChannelOrder(parsing: call.body["sort"])
        let limit = try RequestFields.limit(call.body["limit"], field: "limit", default: Self.defaultChannelsPerQuery, max: Self.maxChannelsPerQuery)
        let offset = try RequestFields.limit(call.body["offset"], field: "offset", default: 0, max: Int.max)
        let messageLimit = try RequestFields.limit(call.body["message_limit"], field: "message_limit",
                                          default: ResultJSON.defaultMessageLimit, max: ResultJSON.maxMessageLimit)
        let watchConnection = try RequestFields.optionalBool(call.body, "watch") == true ? try call.connectionID() : nil
        let membersOnly = call.caller != .server
        let service = self.service
        return service.read { engine throws(ReceiptsError) -> [ChannelCID] in
            guard engine.users[viewer] != nil else { throw .unknownUser(viewer) }
            var pool: Set<ChannelCID> = membersOnly ? engine.membership[viewer] ?? [] : filter.candidates(in: engine) ?? engine.allChannelIDs
            if membersOnly, let narrowed = filter.candidates(in: engine) { pool.formIntersection(narrowed) }
            // Dormant channels are filtered and sorted without loading them: only the page's load.
            let matching = pool.compactMap { engine.listing(of: $0) }.filter(filter.matches)
            return matching.sorted(by: order.precedes).dropFirst(offset).prefix(limit).map(\.cid)
        }
        .flatMap { cids -> EventLoopFuture<[ChannelCID]> in
            guard let watchConnection else { return service.engineLoop.makeSucceededFuture(cids) }
            let watches = cids.map { service.submit(.watch(connectionID: watchConnection, cid: $0)) }
            return EventLoopFuture.whenAllSucceed(watches, on: service.engineLoop).map { _ in cids }
        }
        .flatMap { cids in
            service.readChannelStates { engine, fragments, archived in
                try RESTResultJSON.channelStates(cids, engine: engine, viewer: viewer, messageLimit: messageLimit,
                                                 watcherCount: service.clusterWatcherCount, fragments: &fragments, archived: archived)
            }
        }
    }

}

/// Watching over REST and a thread's replies.
extension RESTAPI {
    /// `POST /channels/{type}/{id}/stop-watching` with a `connection_id` (query or body): that
    /// connection stops receiving the channel's events (a member's connection then gets
    /// `notification.message_new` instead). A user token may name only its own connections (403).
    func stopWatching(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let cid = try call.cid()
        guard let connectionID = try call.connectionID() else { throw .invalid("connection_id is required") }
        let caller = call.caller
        let service = self.service
        return service.read { engine -> Bool in
            if case .user(let user) = caller, let owner = engine.connections[connectionID], owner != user {
                throw WireError.forbidden("connection \(connectionID) belongs to another user")
            }
            return true
        }
        .flatMap { _ in service.submit(.stopWatching(connectionID: connectionID, cid: cid)) }
        .map { _ in Self.emptyObject }
    }

    /// `sort` of a replies query, as Stream's SDKs send it: `[{"field":"created_at","direction":-1}]`,
    /// the one order replies are paged in (newest page first), or `[]`. Any other field or direction
    /// is a 400 naming `sort`, rather than an answer in an order the caller did not ask for.
    static func checkRepliesSort(_ text: String?) throws(WireError) {
        guard let text else { return }
        let refusal = WireError.invalid(
            "sort: replies are paged by created_at, newest page first ([{\"field\":\"created_at\",\"direction\":-1}]); no other order is supported, got \(text)")
        guard let sort = try? JSONParser.parse(text), let entries = sort.arrayValue else { throw refusal }
        for entry in entries {
            guard entry["field"]?.stringValue == "created_at", entry["direction"].map({ $0.intValue == -1 }) ?? true else { throw refusal }
        }
    }

    /// Most replies one page may ask for, and the default.
    static let maxRepliesPerPage = 300
    static let defaultRepliesPerPage = 25

    /// `GET /messages/{id}` (`?cid=` when the id stands in several of the caller's channels): the
    /// message as a channel's messages list it, with its thread's `reply_count`. A message in no
    /// channel the caller (a user token) is a member of is 404, as if it did not exist.
    func getMessage(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let id = call.parameters["id"] ?? ""
        let caller = call.caller
        let named = try call.namedCID()
        let service = self.service
        return service.channels(holdingMessage: id).flatMap { stored in service.readChannelStates { engine, _, archived in
            let (channel, index) = try Self.locate(id, storedIn: stored, named: named, caller: caller, engine: engine)
            return try RESTResultJSON.message(at: index, of: channel, engine: engine, archived: archived, viewer: caller.userID)
        } }
    }

    /// The channel holding message `id` that `caller` may read, and the message's position there.
    /// Message ids are unique within a channel: it is looked for only where it may be: the caller's
    /// channels (every channel for a server token), `named` if that is one of them; of those not in
    /// memory, the ones storage holds it in (`stored`).
    /// - Throws: 404 `unknown_message` when no such channel holds it (also when only channels the
    ///   caller cannot read do: 403 would name a channel it cannot see); 400 when several do and
    ///   none is named.
    static func locate(_ id: String, storedIn stored: [ChannelCID], named: ChannelCID?, caller: RESTCaller,
                       engine: ReceiptsEngine) throws -> (CheckmarkCore.Channel, Int) {
        let holding = Set(stored)
        var scope: Set<ChannelCID>?
        if case .user(let user) = caller { scope = engine.membership[user] ?? [] }
        if let named { scope = (scope ?? [named]).intersection([named]) }
        let narrowed = (scope ?? Set(engine.channels.keys).union(holding)).filter { engine.channels[$0] != nil || holding.contains($0) }
        var candidates = try engine.channels(holdingMessage: id, among: narrowed)
        if case .user(let user) = caller { candidates = candidates.filter { engine.channels[$0]?.members[user] != nil } }
        guard candidates.count <= 1 else {
            throw WireError.invalid("message \(id) stands in several channels (\(candidates.map(\.description).joined(separator: ", "))); name one with ?cid=")
        }
        guard let cid = candidates.first, let channel = engine.channels[cid], let index = channel.messages.position(of: id) else {
            throw ReceiptsError.unknownMessage(id)
        }
        return (channel, index)
    }

    /// `GET /messages/{parent_id}/replies`: the thread's replies, paged like a channel's messages
    /// (`limit`, `id_lt`, `id_gt`, ... in the query) and oldest first. The parent is looked for in the
    /// channels the caller may read (all, for a server token; `?cid=` names one): none is 404, several
    /// is 400; a reply as parent is 400 (threads do not nest). `sort` may only name that order
    /// (``checkRepliesSort(_:)``).
    func replies(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let parentID = call.parameters["parent_id"] ?? ""
        try Self.checkRepliesSort(call.query["sort"])
        let pagination = try MessagePagination.parse(query: call.query, defaultLimit: Self.defaultRepliesPerPage, maxLimit: Self.maxRepliesPerPage)
        let caller = call.caller
        let named = try call.namedCID()
        let service = self.service
        // Storage says first which channels hold the parent, so that of those not in memory only the
        // one holding it is loaded, not every channel the caller may read.
        return service.channels(holdingMessage: parentID).flatMap { stored in service.readChannelStates { engine, _, archived in
            let (channel, index) = try Self.locate(parentID, storedIn: stored, named: named, caller: caller, engine: engine)
            guard !channel.messages.isReply(at: index) else {
                throw WireError.invalid("parent_id \(parentID) is itself a reply; threads do not nest")
            }
            let positions = channel.threads[parentID]?.replyPositions ?? []
            let page = try pagination.page(of: positions, in: channel.messages)
            return try RESTResultJSON.messages(page, of: channel, engine: engine, archived: archived, viewer: caller.userID)
        } }
    }
}
