import CheckmarkCore
import CheckmarkWire
import NIOCore

/// Editing and deleting messages (rules M1-M6 of docs/protocol.md). A message is found by its id in
/// the channels the caller may read, as `GET /messages/{id}` finds it (`?cid=` names one). A user
/// token edits and deletes only its user's messages; a server token any, acting for the user it
/// names (who must then be the author) or, naming none, as the server.
extension RESTAPI {
    /// `POST /messages/{id}`: `{"message": {text, user_id?, ...}}`, the message as the app has it
    /// (Stream's SDKs send every field). Checkmark stores a message's text: the other fields are
    /// those it was sent with, not changed here. Answers `{"message": ...}` (the message as edited).
    func updateMessage(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let id = call.parameters["id"] ?? ""
        guard let message = call.body["message"], case .object = message else { throw .invalid("message must be an object") }
        if let given = try RequestFields.optionalString(message, "id"), given != id {
            throw .invalid("message.id \(given) is not the message of the path (\(id))")
        }
        // Required: a text left out would otherwise erase the message's (rule M2 changes what is sent).
        guard let text = try RequestFields.optionalString(message, "text") else { throw .invalid("message.text must be a string") }
        let inMessage = try RESTCaller.named(in: message)
        let inBody = try RESTCaller.named(in: call.body)
        let editor = try call.caller.actor(named: inMessage ?? inBody)
        // Stream's JavaScript SDK sends the message's `cid`: where to look when the id stands in several.
        let inChannel = try RequestFields.optionalString(message, "cid").map { text throws(WireError) in
            guard let cid = ChannelCID(text) else { throw .invalid("message.cid must be type:id, not \(text)") }
            return cid
        }
        return submitForMessage(id, call, in: inChannel) { cid in .updateMessage(cid: cid, messageID: id, text: text, by: editor) }
    }

    /// `PUT /messages/{id}`: `{"set": {"text": ...}, "unset": ["text"], "user_id"?}`. Only `text` may be
    /// set or unset (unset: the empty text); any other field is 400, naming it, since Checkmark does not
    /// store it. Answers `{"message": ...}`.
    func updateMessagePartial(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let id = call.parameters["id"] ?? ""
        var text: String?
        if let set = call.body["set"] {
            guard let fields = set.objectValue else { throw .invalid("set must be an object") }
            for (key, value) in fields {
                guard key == "text" else { throw .invalid("set.\(key): Checkmark stores a message's text only, not \(key)") }
                guard let given = value.stringValue else { throw .invalid("set.text must be a string") }
                text = given
            }
        }
        if let unset = call.body["unset"] {
            guard case .array(let keys) = unset else { throw .invalid("unset must be an array of field names") }
            for key in keys {
                guard key.stringValue == "text" else { throw .invalid("unset: Checkmark stores a message's text only, not \(key)") }
                guard text == nil else { throw .invalid("text is both set and unset") }
                text = ""
            }
        }
        guard let text else { throw .invalid("set or unset must name text, the one field of a message Checkmark stores") }
        let editor = try call.caller.actor(named: try RESTCaller.named(in: call.body))
        return submitForMessage(id, call) { cid in .updateMessage(cid: cid, messageID: id, text: text, by: editor) }
    }

    /// `DELETE /messages/{id}?hard=true&deleted_by=`: a soft delete (the message stays, `type`
    /// `deleted`), or with `hard` (a server token's only) its text erased too. `delete_for_me` (in the
    /// query or the body) is 501:
    /// Checkmark does not keep deletions per user. Answers `{"message": ...}`.
    func deleteMessage(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let id = call.parameters["id"] ?? ""
        let hard = try Self.flag(call.query, "hard")
        if hard, case .user = call.caller { throw .forbidden("a hard delete needs a server token") }
        // Stream's SDKs send `delete_for_me` in the query (JavaScript) or in the body (Python).
        let forMe = try Self.flag(call.query, "delete_for_me")
        let forMeInBody = try RequestFields.optionalBool(call.body, "delete_for_me") ?? false
        if forMe || forMeInBody {
            throw .notServed("deleting a message for one user", route: "DELETE /messages/{id}?delete_for_me=true")
        }
        let named = try RESTCaller.named(in: call.body, query: call.query)
        let editor = try call.caller.actor(named: call.query["deleted_by"] ?? named)
        return submitForMessage(id, call) { cid in .deleteMessage(cid: cid, messageID: id, hard: hard, by: editor) }
    }

    /// Finds message `id` where the caller may read it (in `given` when the query names no channel),
    /// then submits the command `command` makes for
    /// its channel, answering with the message after it.
    func submitForMessage(_ id: String, _ call: Call, in given: ChannelCID? = nil, _ command: @escaping @Sendable (ChannelCID) -> ReceiptsCommand)
        -> EventLoopFuture<[UInt8]> {
        let caller = call.caller
        let named: ChannelCID?
        do { named = try call.namedCID() ?? given } catch { return service.engineLoop.makeFailedFuture(error) }
        let service = self.service
        return service.channels(holdingMessage: id).flatMap { stored in
            service.readChannelStates { engine, _, _ in try Self.locate(id, storedIn: stored, named: named, caller: caller, engine: engine).0.cid }
        }.flatMap { cid in
            service.submit(command(cid), answer: .message)
        }
    }

    /// A boolean query parameter: absent is false; `true`/`1` and `false`/`0` (400 otherwise).
    static func flag(_ query: [String: String], _ name: String) throws(WireError) -> Bool {
        switch query[name] {
        case nil, "false", "0": false
        case "true", "1": true
        case let other?: throw .invalid("\(name) must be true or false, not \(other)")
        }
    }
}
