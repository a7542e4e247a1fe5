import CheckmarkCore
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
        return service.submit(.sendMessage(cid: cid, userID: author, draft: draft)).flatMap { outcome in
            service.read { engine in
                guard case .message(let sent) = outcome.result else { return ResultJSON.message(outcome) }
                var w = JSONWriter()
                w.beginObject()
                w.key("message")
                StreamJSON.write(message: sent, sender: engine.users[sent.userID], into: &w)
                w.endObject()
                return w.bytes
            }
        }
    }

    /// `POST /channels/{type}/{id}/read`, optionally up to `message_id`. Answers `{"event": ...}`: the
    /// reader's read state after the call, in `message.read`'s shape.
    func markRead(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let cid = try call.cid()
        let reader = try call.caller.requiredActor(named: try RESTCaller.named(in: call.body))
        let messageID = try RequestFields.optionalString(call.body, "message_id")
        let service = self.service
        return service.submit(.markRead(cid: cid, userID: reader, messageID: messageID)).flatMap { _ in
            service.read { engine in
                guard let channel = engine.channels[cid], let user = engine.users[reader],
                      let read = channel.members[reader]?.read else { throw ReceiptsError.notAMember(user: reader, cid: cid) }
                var w = JSONWriter()
                w.beginObject()
                w.key("event")
                w.beginObject()
                w.field("type", "message.read")
                w.field("cid", cid.description)
                w.field("channel_id", cid.id)
                w.field("channel_type", cid.type)
                w.key("user")
                StreamJSON.write(user: user, into: &w)
                w.fieldIfPresent("last_read_message_id", read.lastReadMessageID)
                w.field("created_at", read.lastRead)
                w.endObject()
                w.endObject()
                return w.bytes
            }
        }
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
            var w = JSONWriter()
            w.beginObject()
            w.field("message_id", messageID)
            w.field("cid", cid.description)
            for (name, entries) in [("read_by", receipts.readBy), ("delivered_to", receipts.deliveredTo)] {
                w.key(name)
                w.beginArray()
                for entry in entries {
                    w.beginObject()
                    w.key("user")
                    StreamJSON.write(user: entry.user, into: &w)
                    w.field(name == "read_by" ? "read_at" : "delivered_at", entry.at)
                    w.endObject()
                }
                w.endArray()
            }
            w.field("read_count", receipts.readCount)
            w.field("delivered_count", receipts.deliveredCount)
            w.endObject()
            return w.bytes
        }
    }

    /// `GET /unread` (`?user_id=` for server tokens): Stream's unread counts: the total, per channel
    /// (`channel_id` is the cid) and per channel type.
    func unreadCounts(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let user = try call.caller.requiredActor(named: call.query["user_id"])
        return service.read { engine in
            let channels = try engine.unreadChannels(of: user)
            var byType: [String: (channels: Int, unread: Int)] = [:]
            for channel in channels where channel.unreadMessages > 0 {
                byType[channel.cid.type, default: (0, 0)].channels += 1
                byType[channel.cid.type, default: (0, 0)].unread += channel.unreadMessages
            }
            var w = JSONWriter()
            w.beginObject()
            w.field("total_unread_count", channels.reduce(0) { $0 + $1.unreadMessages })
            w.field("total_unread_channels", channels.count { $0.unreadMessages > 0 })
            w.field("total_unread_threads_count", 0)
            w.key("channels")
            w.beginArray()
            for channel in channels {
                w.beginObject()
                w.field("channel_id", channel.cid.description)
                w.field("unread_count", channel.unreadMessages)
                w.field("last_read", channel.lastRead)
                w.endObject()
            }
            w.endArray()
            w.key("channel_type")
            w.beginArray()
            for type in byType.keys.sorted() {
                w.beginObject()
                w.field("channel_type", type)
                w.field("channel_count", byType[type]!.channels)
                w.field("unread_count", byType[type]!.unread)
                w.endObject()
            }
            w.endArray()
            w.key("threads")
            w.beginArray()
            w.endArray()
            w.endObject()
            return w.bytes
        }
    }
}
