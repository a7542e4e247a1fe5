import CheckmarkCore

/// A client's message on the socket, parsed (docs/protocol.md). Pure: JSON in, request or error out.
package struct GatewayRequest: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        /// Stream's keepalive (`{"type":"health.check"}`, alone or in an array): answered with a
        /// `health.check` event.
        case healthCheck
        /// With `lastSeq`, the last `channel_seq` the client saw: the missed events are replayed first.
        case watch(ChannelCID, lastSeq: Int64?)
        case stopWatching(ChannelCID)
        case sendMessage(ChannelCID, MessageDraft)
        case markRead(ChannelCID, messageID: String?)
        case markReadMany([ChannelReadTarget]?)
        /// `mark_read` with `thread_id`: the thread of that message, up to its newest reply.
        case markThreadRead(ChannelCID, parentID: String)
        case markUnread(ChannelCID, UnreadTarget)
        case markDelivered([DeliveredTarget])
    }

    package var kind: Kind
    /// Echoed in the reply; optional but needed to tell replies apart.
    package var requestID: String?

    /// A message that could not be parsed, with its request id when that much was readable.
    package struct Failure: Error, Sendable {
        package var error: WireError
        package var requestID: String?
        /// The ``JSONLimits`` key the message passed: the connection is closed (1009), not just answered.
        package var limit: String?
    }

    /// Longest request id, in bytes.
    package static let maxRequestIDBytes = 128

    /// Parses one text message. Fails with a ``WireError`` with code `invalid_argument` and a message saying
    /// what is wrong (the request id, when readable, is passed back for the error reply).
    package static func parse(_ bytes: some Collection<UInt8>, limits: JSONLimits = .default) -> Result<GatewayRequest, Failure> {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes, limits: limits)
        } catch {
            if let limit = error.limit {
                return .failure(Failure(error: .invalid("message refused: \(error.description)"), requestID: nil, limit: limit))
            }
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
            return .watch(try RequestFields.cid(o), lastSeq: try RequestFields.optionalSequence(o, "last_seq"))
        case "stop_watching":
            return .stopWatching(try RequestFields.cid(o))
        case "send_message":
            return .sendMessage(try RequestFields.cid(o), try RequestFields.draft(o["message"]))
        case "mark_read":
            let cid = try RequestFields.cid(o)
            switch try RequestFields.readScope(o) {
            case .channel(let messageID): return .markRead(cid, messageID: messageID)
            case .thread(let parentID): return .markThreadRead(cid, parentID: parentID)
            }
        case "mark_read_many":
            return .markReadMany(try RequestFields.readTargets(o["read_by_channel"]))
        case "mark_unread":
            return .markUnread(try RequestFields.cid(o), try RequestFields.unreadTarget(o))
        case "mark_delivered":
            return .markDelivered(try RequestFields.deliveredTargets(o["latest_delivered_messages"]))
        default:
            throw .invalid("unknown message type \(type)")
        }
    }
}
