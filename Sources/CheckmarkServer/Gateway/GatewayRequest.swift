import CheckmarkCore

/// A client's message on the socket, parsed (docs/protocol.md). Pure: JSON in, request or error out.
public struct GatewayRequest: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// Stream's keepalive (`{"type":"health.check"}`, alone or in an array): answered with a
        /// `health.check` event.
        case healthCheck
        case watch(ChannelCID)
        case stopWatching(ChannelCID)
        case sendMessage(ChannelCID, MessageDraft)
        case markRead(ChannelCID, messageID: String?)
        case markReadMany([ChannelReadTarget]?)
        case markUnread(ChannelCID, UnreadTarget)
        case markDelivered([DeliveredTarget])
    }

    public var kind: Kind
    /// Echoed in the reply; optional but needed to tell replies apart.
    public var requestID: String?

    /// A message that could not be parsed, with its request id when that much was readable.
    public struct Failure: Error, Sendable {
        public var error: WireError
        public var requestID: String?
    }

    /// Longest request id, in bytes.
    public static let maxRequestIDBytes = 128

    /// Parses one text message. Fails with a ``WireError`` with code `invalid_argument` and a message saying
    /// what is wrong (the request id, when readable, is passed back for the error reply).
    public static func parse(_ bytes: some Collection<UInt8>) -> Result<GatewayRequest, Failure> {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            return .failure(Failure(error: .invalid("message is not valid JSON: \(error.description)"), requestID: nil))
        }
        // Stream's clients send `[{"type":"health.check",...}]`.
        let object: JSONValue
        if let array = json.arrayValue {
            guard array.count == 1 else { return .failure(Failure(error: .invalid("an array message must hold exactly one object"), requestID: nil)) }
            object = array[0]
        } else {
            object = json
        }
        guard case .object = object else { return .failure(Failure(error: .invalid("message must be a JSON object"), requestID: nil)) }
        let requestID = object["request_id"]?.stringValue
        if let requestID, requestID.utf8.count > maxRequestIDBytes {
            return .failure(Failure(error: .invalid("request_id is longer than \(maxRequestIDBytes) bytes"), requestID: nil))
        }
        do throws(WireError) {
            let kind = try parseKind(object)
            return .success(GatewayRequest(kind: kind, requestID: requestID))
        } catch {
            return .failure(Failure(error: error, requestID: requestID))
        }
    }

    private static func parseKind(_ o: JSONValue) throws(WireError) -> Kind {
        guard let type = o["type"]?.stringValue else { throw .invalid("message has no string field type") }
        switch type {
        case "health.check":
            return .healthCheck
        case "watch":
            return .watch(try cid(o))
        case "stop_watching":
            return .stopWatching(try cid(o))
        case "send_message":
            guard let message = o["message"], case .object = message else { throw .invalid("send_message needs a message object") }
            guard let text = message["text"]?.stringValue else { throw .invalid("message.text must be a string") }
            let kind: Message.Kind
            switch message["type"]?.stringValue ?? "regular" {
            case "regular": kind = .regular
            case "system": kind = .system
            case let other: throw .invalid("message.type \(other) is not regular or system")
            }
            return .sendMessage(try cid(o), MessageDraft(
                id: message["id"]?.stringValue, text: text, kind: kind, parentID: message["parent_id"]?.stringValue,
                showInChannel: message["show_in_channel"]?.boolValue ?? false, silent: message["silent"]?.boolValue ?? false))
        case "mark_read":
            return .markRead(try cid(o), messageID: try optionalString(o, "message_id"))
        case "mark_read_many":
            guard let map = o["read_by_channel"] else { return .markReadMany(nil) }
            guard let pairs = map.objectValue else { throw .invalid("read_by_channel must be an object of cid to message id") }
            return .markReadMany(try pairs.map { (key, value) throws(WireError) -> ChannelReadTarget in
                guard let cid = ChannelCID(key) else { throw .invalid("\(key) is not a channel cid (type:id)") }
                if case .null = value { return ChannelReadTarget(cid: cid, messageID: nil) }
                guard let id = value.stringValue else { throw .invalid("read_by_channel values must be message ids or null") }
                return ChannelReadTarget(cid: cid, messageID: id)
            })
        case "mark_unread":
            let cid = try cid(o)
            if let id = try optionalString(o, "message_id") { return .markUnread(cid, .message(id)) }
            if let text = try optionalString(o, "message_timestamp") {
                guard let time = Timestamp(rfc3339: text) else { throw .invalid("message_timestamp must be an RFC 3339 time") }
                return .markUnread(cid, .timestamp(time))
            }
            throw .invalid("mark_unread needs message_id or message_timestamp")
        case "mark_delivered":
            guard let list = o["latest_delivered_messages"]?.arrayValue else {
                throw .invalid("mark_delivered needs latest_delivered_messages: [{cid, id}]")
            }
            return .markDelivered(try list.map { (entry) throws(WireError) -> DeliveredTarget in
                guard let id = entry["id"]?.stringValue else { throw .invalid("each delivered entry needs a string id") }
                return DeliveredTarget(cid: try cid(entry), messageID: id)
            })
        default:
            throw .invalid("unknown message type \(type)")
        }
    }

    private static func cid(_ o: JSONValue) throws(WireError) -> ChannelCID {
        guard let text = o["cid"]?.stringValue else { throw .invalid("cid (type:id) is required") }
        guard let cid = ChannelCID(text) else { throw .invalid("\(text) is not a channel cid (type:id)") }
        return cid
    }

    private static func optionalString(_ o: JSONValue, _ key: String) throws(WireError) -> String? {
        guard let value = o[key] else { return nil }
        if case .null = value { return nil }
        guard let text = value.stringValue else { throw .invalid("\(key) must be a string") }
        return text
    }
}
