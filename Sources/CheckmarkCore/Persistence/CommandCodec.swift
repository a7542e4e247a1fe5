/// The journal's text form of a ``ReceiptsCommand``: one JSON object with an `op` and the command's
/// fields, in Stream's field names where there is one. Decoding what was encoded gives the same command
/// back, so the journal can be re-run through the engine (the replay tool, a resuming client).
package enum CommandCodec {
    /// Why a journal entry could not be read back.
    package struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        package var reason: String
        package var description: String { "unreadable journal command: \(reason)" }
    }

    /// The command's name in the encoded form (`op`), e.g. `mark_read`.
    package static func op(_ command: ReceiptsCommand) -> String {
        switch command {
        case .upsertUser: "upsert_user"
        case .updateUser: "update_user"
        case .createChannelType: "create_channel_type"
        case .updateChannelType: "update_channel_type"
        case .createChannel: "create_channel"
        case .addMembers: "add_members"
        case .removeMembers: "remove_members"
        case .connect: "connect"
        case .disconnect: "disconnect"
        case .watch: "watch"
        case .stopWatching: "stop_watching"
        case .sendMessage: "send_message"
        case .updateMessage: "update_message"
        case .deleteMessage: "delete_message"
        case .sendReaction: "send_reaction"
        case .deleteReaction: "delete_reaction"
        case .markRead: "mark_read"
        case .markReadMany: "mark_read_many"
        case .markThreadRead: "mark_thread_read"
        case .markUnread: "mark_unread"
        case .markDelivered: "mark_delivered"
        }
    }

    package static func encode(_ command: ReceiptsCommand) -> [UInt8] {
        var w = JSONWriter(capacity: 128)
        w.beginObject()
        w.field("op", op(command))
        switch command {
        case .upsertUser(let user):
            w.key("user")
            writeUser(user, into: &w)
        case .updateUser(let patch):
            w.field("id", patch.id)
            w.key("set")
            w.value(.object(patch.set))
            w.key("unset")
            w.value(.array(patch.unset.map { .string($0) }))
        case .createChannelType(let type):
            w.field("name", type.name)
            w.field("read_events", type.readEvents)
            w.field("delivery_events", type.deliveryEvents)
            w.field("typing_events", type.typingEvents)
            w.field("custom_events", type.customEvents)
        case .updateChannelType(let name, let read, let delivery, let typing, let custom):
            w.field("name", name)
            if let read { w.field("read_events", read) }
            if let delivery { w.field("delivery_events", delivery) }
            if let typing { w.field("typing_events", typing) }
            if let custom { w.field("custom_events", custom) }
        case .createChannel(let cid, let createdBy, let members):
            w.field("cid", cid.description)
            w.fieldIfPresent("created_by_id", createdBy)
            writeStrings("members", members, into: &w)
        case .addMembers(let cid, let ids):
            w.field("cid", cid.description)
            writeStrings("members", ids, into: &w)
        case .removeMembers(let cid, let ids):
            w.field("cid", cid.description)
            writeStrings("members", ids, into: &w)
        case .connect(let connection, let user):
            w.field("connection_id", connection)
            w.field("user_id", user)
        case .disconnect(let connection):
            w.field("connection_id", connection)
        case .watch(let connection, let cid):
            w.field("connection_id", connection)
            w.field("cid", cid.description)
        case .stopWatching(let connection, let cid):
            w.field("connection_id", connection)
            w.field("cid", cid.description)
        case .sendMessage(let cid, let user, let draft):
            w.field("cid", cid.description)
            w.field("user_id", user)
            w.key("message")
            w.beginObject()
            w.fieldIfPresent("id", draft.id)
            w.field("text", draft.text)
            w.field("type", draft.kind.rawValue)
            w.fieldIfPresent("parent_id", draft.parentID)
            w.field("show_in_channel", draft.showInChannel)
            w.field("silent", draft.silent)
            w.endObject()
        case .markRead(let cid, let user, let messageID):
            w.field("cid", cid.description)
            w.field("user_id", user)
            w.fieldIfPresent("message_id", messageID)
        case .updateMessage(let cid, let messageID, let text, let editor):
            w.field("cid", cid.description)
            w.field("message_id", messageID)
            w.field("text", text)
            w.fieldIfPresent("by", editor)
        case .deleteMessage(let cid, let messageID, let hard, let editor):
            w.field("cid", cid.description)
            w.field("message_id", messageID)
            w.field("hard", hard)
            w.fieldIfPresent("by", editor)
        case .sendReaction(let cid, let messageID, let user, let type, let score, let unique):
            w.field("cid", cid.description)
            w.field("message_id", messageID)
            w.field("user_id", user)
            w.field("type", type)
            w.field("score", score)
            w.field("enforce_unique", unique)
        case .deleteReaction(let cid, let messageID, let user, let type):
            w.field("cid", cid.description)
            w.field("message_id", messageID)
            w.field("user_id", user)
            w.field("type", type)
        case .markThreadRead(let cid, let user, let parentID):
            w.field("cid", cid.description)
            w.field("user_id", user)
            w.field("thread_id", parentID)
        case .markReadMany(let user, let targets):
            w.field("user_id", user)
            if let targets {
                w.key("read_by_channel")
                w.beginObject()
                for target in targets {
                    w.key(target.cid.description)
                    if let id = target.messageID { w.string(id) } else { w.null() }
                }
                w.endObject()
            }
        case .markUnread(let cid, let user, let target):
            w.field("cid", cid.description)
            w.field("user_id", user)
            switch target {
            case .message(let id): w.field("message_id", id)
            case .timestamp(let time): w.field("message_timestamp", Int(time.rawValue))
            }
        case .markDelivered(let user, let latest):
            w.field("user_id", user)
            w.key("latest_delivered_messages")
            w.beginArray()
            for target in latest {
                w.beginObject()
                w.field("cid", target.cid.description)
                w.field("id", target.messageID)
                w.endObject()
            }
            w.endArray()
        }
        w.endObject()
        return w.bytes
    }

    package static func decode(_ bytes: some Collection<UInt8>) throws(Failure) -> ReceiptsCommand {
        let json: JSONValue
        do { json = try JSONParser.parse(bytes, limits: .stored) } catch { throw Failure(reason: error.description) }
        let op = try string(json, "op")
        switch op {
        case "upsert_user":
            guard let user = json["user"] else { throw Failure(reason: "upsert_user without user") }
            return .upsertUser(try readUser(user))
        case "update_user":
            let unset = try (json["unset"]?.arrayValue ?? []).map { (value) throws(Failure) -> String in
                guard let text = value.stringValue else { throw Failure(reason: "unset holds a non-string") }
                return text
            }
            return .updateUser(UserPatch(id: try string(json, "id"), set: json["set"]?.objectValue ?? [], unset: unset))
        case "create_channel_type":
            return .createChannelType(ChannelType(
                name: try string(json, "name"), readEvents: json["read_events"]?.boolValue ?? true,
                deliveryEvents: json["delivery_events"]?.boolValue ?? false, typingEvents: json["typing_events"]?.boolValue ?? true,
                customEvents: json["custom_events"]?.boolValue ?? true))
        case "update_channel_type":
            return .updateChannelType(
                name: try string(json, "name"), readEvents: json["read_events"]?.boolValue,
                deliveryEvents: json["delivery_events"]?.boolValue, typingEvents: json["typing_events"]?.boolValue,
                customEvents: json["custom_events"]?.boolValue)
        case "create_channel":
            return .createChannel(cid: try cid(json), createdBy: json["created_by_id"]?.stringValue, members: try strings(json, "members"))
        case "add_members":
            return .addMembers(cid: try cid(json), userIDs: try strings(json, "members"))
        case "remove_members":
            return .removeMembers(cid: try cid(json), userIDs: try strings(json, "members"))
        case "connect":
            return .connect(connectionID: try string(json, "connection_id"), userID: try string(json, "user_id"))
        case "disconnect":
            return .disconnect(connectionID: try string(json, "connection_id"))
        case "watch":
            return .watch(connectionID: try string(json, "connection_id"), cid: try cid(json))
        case "stop_watching":
            return .stopWatching(connectionID: try string(json, "connection_id"), cid: try cid(json))
        case "send_message":
            guard let message = json["message"] else { throw Failure(reason: "send_message without message") }
            let kind = Message.Kind(rawValue: message["type"]?.stringValue ?? "regular") ?? .regular
            let draft = MessageDraft(
                id: message["id"]?.stringValue, text: try string(message, "text"), kind: kind,
                parentID: message["parent_id"]?.stringValue, showInChannel: message["show_in_channel"]?.boolValue ?? false,
                silent: message["silent"]?.boolValue ?? false)
            return .sendMessage(cid: try cid(json), userID: try string(json, "user_id"), draft: draft)
        case "update_message":
            return .updateMessage(cid: try cid(json), messageID: try string(json, "message_id"), text: try string(json, "text"),
                                  by: json["by"]?.stringValue)
        case "delete_message":
            return .deleteMessage(cid: try cid(json), messageID: try string(json, "message_id"), hard: json["hard"]?.boolValue ?? false,
                                  by: json["by"]?.stringValue)
        case "send_reaction":
            guard let score = json["score"]?.intValue else { throw Failure(reason: "send_reaction without score") }
            return .sendReaction(cid: try cid(json), messageID: try string(json, "message_id"), userID: try string(json, "user_id"),
                                 type: try string(json, "type"), score: score, enforceUnique: json["enforce_unique"]?.boolValue ?? false)
        case "delete_reaction":
            return .deleteReaction(cid: try cid(json), messageID: try string(json, "message_id"), userID: try string(json, "user_id"),
                                   type: try string(json, "type"))
        case "mark_read":
            return .markRead(cid: try cid(json), userID: try string(json, "user_id"), messageID: json["message_id"]?.stringValue)
        case "mark_thread_read":
            return .markThreadRead(cid: try cid(json), userID: try string(json, "user_id"), parentID: try string(json, "thread_id"))
        case "mark_read_many":
            var targets: [ChannelReadTarget]?
            if let pairs = json["read_by_channel"]?.objectValue {
                targets = try pairs.map { (key, value) throws(Failure) -> ChannelReadTarget in
                    guard let cid = ChannelCID(key) else { throw Failure(reason: "bad cid \(key)") }
                    return ChannelReadTarget(cid: cid, messageID: value.stringValue)
                }
            }
            return .markReadMany(userID: try string(json, "user_id"), channels: targets)
        case "mark_unread":
            let target: UnreadTarget
            if let id = json["message_id"]?.stringValue {
                target = .message(id)
            } else if let time = json["message_timestamp"]?.intValue {
                target = .timestamp(Timestamp(rawValue: Int64(time)))
            } else {
                throw Failure(reason: "mark_unread without message_id or message_timestamp")
            }
            return .markUnread(cid: try cid(json), userID: try string(json, "user_id"), from: target)
        case "mark_delivered":
            let latest = try (json["latest_delivered_messages"]?.arrayValue ?? []).map { (entry) throws(Failure) -> DeliveredTarget in
                DeliveredTarget(cid: try cid(entry), messageID: try string(entry, "id"))
            }
            return .markDelivered(userID: try string(json, "user_id"), latest: latest)
        default:
            throw Failure(reason: "unknown op \(op)")
        }
    }

    // MARK: Users (all fields, privacy and times included)

    static func writeUser(_ user: User, into w: inout JSONWriter) {
        w.beginObject()
        w.field("id", user.id)
        w.fieldIfPresent("name", user.name)
        w.fieldIfPresent("image", user.image)
        w.key("custom")
        w.value(.object(user.custom))
        w.field("read_receipts", user.privacy.readReceipts)
        w.field("delivery_receipts", user.privacy.deliveryReceipts)
        w.field("typing_indicators", user.privacy.typingIndicators)
        w.field("created_at", Int(user.createdAt.rawValue))
        w.field("updated_at", Int(user.updatedAt.rawValue))
        w.endObject()
    }

    static func readUser(_ json: JSONValue) throws(Failure) -> User {
        User(
            id: try string(json, "id"), name: json["name"]?.stringValue, image: json["image"]?.stringValue,
            custom: json["custom"]?.objectValue ?? [],
            privacy: PrivacySettings(
                readReceipts: json["read_receipts"]?.boolValue ?? true,
                deliveryReceipts: json["delivery_receipts"]?.boolValue ?? true,
                typingIndicators: json["typing_indicators"]?.boolValue ?? true),
            createdAt: Timestamp(rawValue: Int64(json["created_at"]?.intValue ?? 0)),
            updatedAt: Timestamp(rawValue: Int64(json["updated_at"]?.intValue ?? 0)))
    }

    /// A user's custom fields as JSON text (storage keeps them in one column).
    package static func encodeCustom(_ custom: [(String, JSONValue)]) -> [UInt8] {
        var w = JSONWriter(capacity: 32)
        w.value(.object(custom))
        return w.bytes
    }

    package static func decodeCustom(_ bytes: some Collection<UInt8>) throws(Failure) -> [(String, JSONValue)] {
        do {
            guard let pairs = try JSONParser.parse(bytes, limits: .stored).objectValue else { throw Failure(reason: "custom fields are not an object") }
            return pairs
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(reason: "\(error)")
        }
    }

    // MARK: Helpers

    private static func string(_ json: JSONValue, _ key: String) throws(Failure) -> String {
        guard let value = json[key]?.stringValue else { throw Failure(reason: "missing string \(key)") }
        return value
    }

    private static func cid(_ json: JSONValue) throws(Failure) -> ChannelCID {
        let text = try string(json, "cid")
        guard let cid = ChannelCID(text) else { throw Failure(reason: "bad cid \(text)") }
        return cid
    }

    private static func strings(_ json: JSONValue, _ key: String) throws(Failure) -> [String] {
        try (json[key]?.arrayValue ?? []).map { (value) throws(Failure) -> String in
            guard let text = value.stringValue else { throw Failure(reason: "\(key) holds a non-string") }
            return text
        }
    }

    private static func writeStrings(_ key: String, _ values: [String], into w: inout JSONWriter) {
        w.key(key)
        w.beginArray()
        for value in values { w.string(value) }
        w.endArray()
    }
}
