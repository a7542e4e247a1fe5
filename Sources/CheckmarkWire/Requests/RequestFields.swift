import CheckmarkCore

/// Reading the fields that the socket commands and the REST bodies share (a message draft, a
/// `read_by_channel` map, an unread start, a delivered list). Pure: JSON in, value or
/// `invalid_argument` ``WireError`` out, with a message naming the field.
package enum RequestFields {
    /// A channel cid from a `type:id` string field.
    package static func cid(_ object: JSONValue, _ key: String = "cid") throws(WireError) -> ChannelCID {
        guard let text = object[key]?.stringValue else { throw .invalid("\(key) (type:id) is required") }
        guard let cid = ChannelCID(text) else { throw .invalid("\(text) is not a channel cid (type:id)") }
        return cid
    }

    /// A channel cid from the two path segments `{type}/{id}`.
    package static func cid(type: String, id: String) throws(WireError) -> ChannelCID {
        guard let cid = ChannelCID("\(type):\(id)") else { throw .invalid("\(type):\(id) is not a valid channel cid") }
        return cid
    }

    /// A string field that may be absent or null.
    package static func optionalString(_ object: JSONValue?, _ key: String) throws(WireError) -> String? {
        guard let value = object?[key] else { return nil }
        if case .null = value { return nil }
        guard let text = value.stringValue else { throw .invalid("\(key) must be a string") }
        return text
    }

    /// A channel sequence (`last_seq`): absent or null, or an integer from 0 to 2^53.
    package static func optionalSequence(_ object: JSONValue?, _ key: String) throws(WireError) -> Int64? {
        guard let value = object?[key] else { return nil }
        if case .null = value { return nil }
        return try sequence(value, key)
    }

    /// An integer from 0 to 2^53, the range a channel sequence takes.
    package static func sequence(_ value: JSONValue, _ key: String) throws(WireError) -> Int64 {
        guard let number = value.intValue, number >= 0, number <= 1 << 53 else {
            throw .invalid("\(key) must be a non-negative integer (a channel_seq the client saw)")
        }
        return Int64(number)
    }

    /// The `resume` map of `/connect`: `{cid: last channel_seq seen}`, at most `limit` channels.
    package static func resumeMap(_ value: JSONValue?, limit: Int) throws(WireError) -> [(ChannelCID, Int64)] {
        guard let value else { return [] }
        if case .null = value { return [] }
        guard let entries = value.objectValue else { throw .invalid("resume must be an object of cid to last channel_seq") }
        guard entries.count <= limit else { throw .invalid("resume names more than \(limit) channels") }
        var result: [(ChannelCID, Int64)] = []
        var seen: Set<ChannelCID> = []
        for (key, seq) in entries {
            guard let cid = ChannelCID(key) else { throw .invalid("resume: \(key) is not a channel cid (type:id)") }
            guard seen.insert(cid).inserted else { throw .invalid("resume names \(key) twice") }
            result.append((cid, try sequence(seq, "resume[\(key)]")))
        }
        return result
    }

    /// A boolean field that may be absent or null.
    package static func optionalBool(_ object: JSONValue?, _ key: String) throws(WireError) -> Bool? {
        guard let value = object?[key] else { return nil }
        if case .null = value { return nil }
        guard let flag = value.boolValue else { throw .invalid("\(key) must be a boolean") }
        return flag
    }

    /// A message to send: `text` (required string), `id`, `type` (`regular` | `system`), `parent_id`,
    /// `show_in_channel`, `silent`.
    package static func draft(_ message: JSONValue?) throws(WireError) -> MessageDraft {
        guard let message, case .object = message else { throw .invalid("message must be an object") }
        guard let text = message["text"]?.stringValue else { throw .invalid("message.text must be a string") }
        let kind: Message.Kind
        switch try optionalString(message, "type") ?? "regular" {
        case "regular": kind = .regular
        case "system": kind = .system
        case let other: throw .invalid("message.type \(other) is not regular or system")
        }
        return MessageDraft(
            id: try optionalString(message, "id"), text: text, kind: kind,
            parentID: try optionalString(message, "parent_id"),
            showInChannel: try optionalBool(message, "show_in_channel") ?? false,
            silent: try optionalBool(message, "silent") ?? false)
    }

    /// `read_by_channel`: an object of cid to message id (or null for the whole channel); absent means
    /// every channel of the user (nil).
    package static func readTargets(_ value: JSONValue?) throws(WireError) -> [ChannelReadTarget]? {
        guard let value else { return nil }
        if case .null = value { return nil }
        guard let pairs = value.objectValue else { throw .invalid("read_by_channel must be an object of cid to message id") }
        return try pairs.map { (key, id) throws(WireError) -> ChannelReadTarget in
            guard let cid = ChannelCID(key) else { throw .invalid("\(key) is not a channel cid (type:id)") }
            if case .null = id { return ChannelReadTarget(cid: cid, messageID: nil) }
            guard let text = id.stringValue else { throw .invalid("read_by_channel values must be message ids or null") }
            return ChannelReadTarget(cid: cid, messageID: text)
        }
    }

    /// What a mark read reads (the body of `POST /channels/{type}/{id}/read` or a `mark_read` command).
    package enum ReadScope {
        /// The channel, up to `message_id` or everything.
        case channel(messageID: String?)
        /// The thread of `thread_id`, up to its newest reply.
        case thread(parentID: String)
    }

    /// `message_id` or `thread_id` (not both: a thread read moves only the thread's state).
    package static func readScope(_ object: JSONValue) throws(WireError) -> ReadScope {
        let messageID = try optionalString(object, "message_id")
        guard let threadID = try optionalString(object, "thread_id") else { return .channel(messageID: messageID) }
        guard !threadID.isEmpty else { throw .invalid("thread_id must not be empty") }
        guard messageID == nil else { throw .invalid("message_id and thread_id cannot be combined: a thread read reads the whole thread") }
        return .thread(parentID: threadID)
    }

    /// Where mark unread starts: `message_id`, or else `message_timestamp` (RFC 3339).
    package static func unreadTarget(_ object: JSONValue) throws(WireError) -> UnreadTarget {
        if let value = object["thread_id"], value != .null {
            throw .invalid("thread_id: marking a thread unread is not supported; mark unread takes a channel message")
        }
        if let id = try optionalString(object, "message_id") { return .message(id) }
        if let text = try optionalString(object, "message_timestamp") {
            guard let time = Timestamp(rfc3339: text) else { throw .invalid("message_timestamp must be an RFC 3339 time") }
            return .timestamp(time)
        }
        throw .invalid("mark unread needs message_id or message_timestamp")
    }

    /// `latest_delivered_messages`: a non-empty array of `{cid, id}`.
    package static func deliveredTargets(_ value: JSONValue?) throws(WireError) -> [DeliveredTarget] {
        guard let list = value?.arrayValue, !list.isEmpty else {
            throw .invalid("latest_delivered_messages must be a non-empty array of {cid, id}")
        }
        return try list.map { (entry) throws(WireError) -> DeliveredTarget in
            guard let id = entry["id"]?.stringValue else { throw .invalid("each delivered entry needs a string id") }
            return DeliveredTarget(cid: try cid(entry), messageID: id)
        }
    }

    /// Member ids: an array of strings or of `{user_id}` objects.
    package static func userIDs(_ value: JSONValue?, field: String) throws(WireError) -> [String] {
        guard let value else { return [] }
        if case .null = value { return [] }
        guard let array = value.arrayValue else { throw .invalid("\(field) must be an array of user ids") }
        return try array.map { (element) throws(WireError) -> String in
            if let id = element.stringValue ?? element["user_id"]?.stringValue ?? element["user"]?["id"]?.stringValue { return id }
            throw .invalid("\(field) must hold user ids or {user_id} objects")
        }
    }

    /// A non-negative integer field with a default and a maximum (400 past it).
    /// ``limit(_:field:default:max:)`` of a query parameter's text.
    package static func queryLimit(_ text: String?, field: String, default fallback: Int, max: Int) throws(WireError) -> Int {
        guard let text else { return fallback }
        guard let number = Int(text) else { throw .invalid("\(field) must be a non-negative integer") }
        return try limit(.number(Double(number)), field: field, default: fallback, max: max)
    }

    package static func limit(_ value: JSONValue?, field: String, default fallback: Int, max: Int) throws(WireError) -> Int {
        guard let value, value != .null else { return fallback }
        guard let number = value.intValue, number >= 0 else { throw .invalid("\(field) must be a non-negative integer") }
        guard number <= max else { throw .invalid("\(field) must be at most \(max)") }
        return number
    }
}
