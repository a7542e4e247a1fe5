import CheckmarkCore
import CheckmarkWire
import NIOCore

/// Messages, the confirmations (read, unread, delivered) and what they produce (receipts, unread counts).
/// The acting user is the token's user, or for a server token the `user_id` / `user.id` of the body
/// (or of the query where Stream's SDKs put it there).
extension RESTAPI {
    /// `POST /channels/{type}/{id}/message`: `{"message": {text, id?, type?, parent_id?, show_in_channel?,
    /// silent?, user_id | user}}`. Answers `{"message": ...}`.
    func sendMessage(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let cid = try call.cid()
        let message = call.body["message"]
        let draft = try RequestFields.draft(message)
        let inMessage = try RESTCaller.named(in: message)
        let inBody = try RESTCaller.named(in: call.body)
        let author = try call.caller.requiredActor(named: inMessage ?? inBody)
        let service = self.service
        return service.submit(.sendMessage(cid: cid, userID: author, draft: draft), answer: .message)
    }

    /// `POST /channels/{type}/{id}/read`, optionally up to `message_id`, or with `thread_id` the thread
    /// of that message (only the thread's read state moves). Answers `{"event": ...}`: the reader's read
    /// state after the call, in `message.read`'s shape (with `thread_id` for a thread).
    func markRead(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let cid = try call.cid()
        let reader = try call.caller.requiredActor(named: try RESTCaller.named(in: call.body))
        let scope = try RequestFields.readScope(call.body)
        let command: ReceiptsCommand = switch scope {
        case .channel(let messageID): .markRead(cid: cid, userID: reader, messageID: messageID)
        case .thread(let parentID): .markThreadRead(cid: cid, userID: reader, parentID: parentID)
        }
        let thread: String? = switch scope {
        case .channel: nil
        case .thread(let parentID): parentID
        }
        return service.submit(command, answer: .readState(cid: cid, reader: reader, thread: thread))
    }

    /// `POST /channels/{type}/{id}/unread` from `message_id` or `message_timestamp` (one of the
    /// channel's last 100 messages; older is 400).
    func markUnread(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let cid = try call.cid()
        let reader = try call.caller.requiredActor(named: try RESTCaller.named(in: call.body))
        let target = try RequestFields.unreadTarget(call.body)
        return service.submit(.markUnread(cid: cid, userID: reader, from: target)).map { _ in Self.emptyObject }
    }

    /// `POST /channels/read`: every channel of the user, or those of `read_by_channel` (cid to message id).
    func markAllRead(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let reader = try call.caller.requiredActor(named: try RESTCaller.named(in: call.body))
        let targets = try RequestFields.readTargets(call.body["read_by_channel"])
        return service.submit(.markReadMany(userID: reader, channels: targets)).map { _ in Self.emptyObject }
    }

    /// `POST /channels/delivered`: `latest_delivered_messages: [{cid, id}]`, the user in the body or in
    /// the query (`?user_id=`, as Stream's SDKs send it).
    func markDelivered(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let user = try call.caller.requiredActor(named: try RESTCaller.named(in: call.body, query: call.query))
        let latest = try RequestFields.deliveredTargets(call.body["latest_delivered_messages"])
        return service.submit(.markDelivered(userID: user, latest: latest)).map { _ in Self.emptyObject }
    }

    /// `GET /channels/{type}/{id}/messages/{message_id}/receipts` (Checkmark's addition): who read the
    /// message and who has it delivered, with the exact time each first passed it, as the viewer (a
    /// member; `?user_id=` for server tokens) may see them.
    func messageReceipts(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let cid = try call.cid()
        let viewer = try call.caller.requiredActor(named: call.query["user_id"])
        let messageID = call.parameters["message_id"] ?? ""
        return service.read { engine in
            let receipts = try engine.receipts(of: messageID, in: cid, viewer: viewer)
            return RESTResultJSON.receipts(receipts, messageID: messageID, cid: cid)
        }
    }

    /// `GET /unread` (`?user_id=` for server tokens): Stream's unread counts: the total, per channel
    /// (`channel_id` is the cid), per channel type, and the threads with unread replies.
    func unreadCounts(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let user = try call.caller.requiredActor(named: call.query["user_id"])
        return service.read { engine in
            RESTResultJSON.unreadCounts(channels: try engine.unreadChannels(of: user), threads: try engine.unreadThreads(of: user),
                                        unreadThreads: engine.counts(for: user).unreadThreads)
        }
    }
}
