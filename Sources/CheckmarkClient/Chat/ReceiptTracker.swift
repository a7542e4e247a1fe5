import CheckmarkCore

/// The read states of one channel as a client sees them, kept current from the watch reply and the
/// channel's `message.read` / `message.delivered` events, and the derivation every chat UI needs:
/// the status of each own message (Stream's `reads(for:)` and `deliveredReads(for:)`). Pure.
public struct ReceiptTracker: Sendable {
    public let cid: ChannelCID
    /// Per user: the newest `last_read` and `last_delivered_at` seen.
    public private(set) var pointers: [String: (read: Timestamp?, delivered: Timestamp?)] = [:]

    /// Starts from a watch reply's (or channel query's) `read` array.
    public init(cid: ChannelCID, channelState: JSONValue) {
        self.cid = cid
        for state in channelState["read"]?.arrayValue ?? [] {
            guard let user = state["user"]?["id"]?.stringValue else { continue }
            let read = state["last_read"]?.stringValue.flatMap(Timestamp.init(rfc3339:))
            let delivered = state["last_delivered_at"]?.stringValue.flatMap(Timestamp.init(rfc3339:))
            pointers[user] = (read, delivered)
        }
    }

    /// Takes in one event; events of other channels and other types change nothing.
    public mutating func apply(_ event: ChatEvent) {
        guard let json = event.json, event.cid == cid, let user = json["user"]?["id"]?.stringValue else { return }
        var current = pointers[user] ?? (nil, nil)
        switch event.type {
        case "message.read":
            if let at = json["created_at"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) { current.read = max(current.read ?? at, at) }
        case "message.delivered":
            if let at = json["last_delivered_at"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) {
                current.delivered = max(current.delivered ?? at, at)
            }
        default:
            return
        }
        pointers[user] = current
    }

    /// The status of a message created at `createdAt` by `author`: read by whoever's `last_read` is at
    /// or after it, delivered to whoever's `last_delivered_at` (or `last_read`) is; the author never counts.
    public func status(createdAt: Timestamp, author: String) -> MessageStatus {
        var readBy: [String] = []
        var deliveredTo: [String] = []
        for (user, pointer) in pointers where user != author {
            let read = pointer.read.map { $0 >= createdAt } ?? false
            let delivered = read || (pointer.delivered.map { $0 >= createdAt } ?? false)
            if read { readBy.append(user) }
            if delivered { deliveredTo.append(user) }
        }
        let state: MessageStatus.State = !readBy.isEmpty ? .read : !deliveredTo.isEmpty ? .delivered : .sent
        return MessageStatus(state: state, readBy: readBy.sorted(), deliveredTo: deliveredTo.sorted())
    }

    /// The status of a message as the server sent it (`created_at` and `user.id` read from its JSON).
    public func status(of message: JSONValue) -> MessageStatus? {
        guard let at = message["created_at"]?.stringValue.flatMap(Timestamp.init(rfc3339:)),
              let author = message["user"]?["id"]?.stringValue else { return nil }
        return status(createdAt: at, author: author)
    }
}
