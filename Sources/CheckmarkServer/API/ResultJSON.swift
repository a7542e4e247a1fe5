import CheckmarkCore

/// The JSON results the gateway's replies and the REST API share.
enum ResultJSON {
    /// `{"message": ...}` for a send-message outcome.
    @Sendable static func message(_ outcome: ReceiptsOutcome) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        if case .message(let message) = outcome.result {
            w.key("message")
            StreamJSON.write(message: message, sender: nil, into: &w)
        }
        w.endObject()
        return w.bytes
    }

    /// The watch reply (and the channel query's answer): the channel's read states as the viewer may see them (rule 10) and its members.
    static func channelState(engine: ReceiptsEngine, cid: ChannelCID, viewer: String) throws -> [UInt8] {
        let reads = try engine.readStates(of: cid, viewer: viewer)
        guard let channel = engine.channels[cid] else { throw ReceiptsError.unknownChannel(cid) }
        var w = JSONWriter()
        w.beginObject()
        w.key("channel")
        w.beginObject()
        w.field("cid", cid.description)
        w.field("id", cid.id)
        w.field("type", cid.type)
        w.field("member_count", channel.members.count)
        w.endObject()
        w.field("watcher_count", channel.watchingUsers.count)
        w.key("read")
        w.beginArray()
        for view in reads { StreamJSON.write(readState: view, into: &w) }
        w.endArray()
        w.key("messages")
        w.beginArray()
        for message in channel.messages.suffix(25) {
            StreamJSON.write(message: message, sender: engine.users[message.userID], into: &w)
        }
        w.endArray()
        w.endObject()
        return w.bytes
    }

    /// A new user from Stream's `user_details` / `users` fields (unknown reserved fields are dropped).
    static func user(id: String, details: [(String, JSONValue)]) -> User? {
        var user = User(id: id)
        for (key, value) in details {
            switch key {
            case "name": user.name = value.stringValue
            case "image": user.image = value.stringValue
            case "privacy_settings":
                user.privacy.readReceipts = value["read_receipts"]?["enabled"]?.boolValue ?? true
                user.privacy.deliveryReceipts = value["delivery_receipts"]?["enabled"]?.boolValue ?? true
            default:
                if !User.reservedFields.contains(key) { user.custom.append((key, value)) }
            }
        }
        return user
    }

}
