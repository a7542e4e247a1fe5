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
        return service.submit(.sendMessage(cid: cid, userID: author, draft: draft)).flatMap { outcome in
            service.read { engine in ResultJSON.message(outcome, engine: engine) }
        }
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
        let service = self.service
        return service.submit(command).flatMap { _ in
            service.read { engine in
                guard let channel = engine.channels[cid], let user = engine.users[reader],
                      var read = channel.members[reader]?.read else { throw ReceiptsError.notAMember(user: reader, cid: cid) }
                var threadID: String?
                if case .thread(let parentID) = scope, let threadRead = channel.threads[parentID]?.reads[reader] {
                    threadID = parentID
                    read.lastReadMessageID = threadRead.lastReadMessageID
                    read.lastRead = threadRead.lastRead
                }
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
                w.fieldIfPresent("thread_id", threadID)
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
    /// (`channel_id` is the cid), per channel type, and the threads with unread replies.
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
            w.field("total_unread_threads_count", engine.counts(for: user).unreadThreads)
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
            for thread in try engine.unreadThreads(of: user) {
                w.beginObject()
                w.field("parent_message_id", thread.parentID)
                w.field("channel_cid", thread.cid.description)
                w.field("unread_count", thread.unreadReplies)
                w.field("last_read", thread.lastRead)
                // Stream requires the field: empty while no reply was read.
                w.field("last_read_message_id", thread.lastReadMessageID ?? "")
                w.endObject()
            }
            w.endArray()
            w.endObject()
            return w.bytes
        }
    }
}
