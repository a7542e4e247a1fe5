import CheckmarkCore
import CheckmarkWire
import NIOCore

/// Reactions (rules R1-R5 of docs/protocol.md). The message is found by its id as `GET /messages/{id}`
/// finds it (`?cid=` names its channel). The reacting user is the token's, or for a server token the
/// one the body (or the query) names.
extension RESTAPI {
    /// Most reactions `GET /messages/{id}/reactions` lists at once, and how many without `limit`.
    static let maxReactionsPerPage = 300
    static let defaultReactionsPerPage = 10

    /// `POST /messages/{id}/reaction`: `{"reaction": {type, score?, user_id?}, "enforce_unique"?,
    /// "user_id"?}`. Answers 201 `{"message", "reaction"}`: the message as the reacting user sees it
    /// (its reactions are `own_reactions`).
    func sendReaction(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let id = call.parameters["id"] ?? ""
        guard let reaction = call.body["reaction"], case .object = reaction else { throw .invalid("reaction must be an object") }
        guard let type = try RequestFields.optionalString(reaction, "type"), !type.isEmpty else {
            throw .invalid("reaction.type must be a non-empty string")
        }
        let score: Int
        if let given = reaction["score"], given != .null {
            guard let number = given.intValue else { throw .invalid("reaction.score must be an integer") }
            score = number
        } else {
            score = 1
        }
        let enforceUnique = try RequestFields.optionalBool(call.body, "enforce_unique") ?? false
        let inReaction = try RESTCaller.named(in: reaction)
        let inBody = try RESTCaller.named(in: call.body, query: call.query)
        let user = try call.caller.requiredActor(named: inReaction ?? inBody)
        return submitForMessage(id, call) { cid in
            .sendReaction(cid: cid, messageID: id, userID: user, type: type, score: score, enforceUnique: enforceUnique)
        }
    }

    /// `DELETE /messages/{id}/reaction/{type}` (`?user_id=` for a server token). Answers
    /// `{"message", "reaction"}`, the reaction taken back.
    func deleteReaction(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let id = call.parameters["id"] ?? ""
        let type = call.parameters["type"] ?? ""
        let user = try call.caller.requiredActor(named: try RESTCaller.named(in: call.body, query: call.query))
        return submitForMessage(id, call) { cid in .deleteReaction(cid: cid, messageID: id, userID: user, type: type) }
    }

    /// `GET /messages/{id}/reactions?limit=&offset=`: the message's reactions, newest first
    /// (`limit` 10, at most 300).
    func getReactions(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let id = call.parameters["id"] ?? ""
        let limit = try RequestFields.queryLimit(call.query["limit"], field: "limit", default: Self.defaultReactionsPerPage,
                                                 max: Self.maxReactionsPerPage)
        let offset = try RequestFields.queryLimit(call.query["offset"], field: "offset", default: 0, max: Int(Int32.max))
        let caller = call.caller
        let named = try call.namedCID()
        let service = self.service
        return service.channels(holdingMessage: id).flatMap { stored in service.readChannelStates { engine, _, _ in
            let (channel, position) = try Self.locate(id, storedIn: stored, named: named, caller: caller, engine: engine)
            var w = JSONWriter()
            w.beginObject()
            w.key("reactions")
            w.beginArray()
            for reaction in channel.messages.reactions(at: position).reversed().dropFirst(offset).prefix(limit) {
                StreamJSON.write(reaction: reaction, messageID: id, user: engine.users[reaction.userID], into: &w)
            }
            w.endArray()
            w.endObject()
            return w.bytes
        } }
    }
}
