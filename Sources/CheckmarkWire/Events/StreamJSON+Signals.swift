import CheckmarkCore

extension StreamJSON {
    /// Keys of a custom event that Checkmark sets itself, or that clients read as the server's (a
    /// channel's sequence, counts, a request's answer): a sender's own values for them are dropped.
    static let signalKeys: Set<String> = [
        "type", "cid", "channel_id", "channel_type", "created_at", "user", "user_id", "custom", "channel_seq", "watcher_count",
        "unread_count", "total_unread_count", "unread_channels", "unread_threads", "me", "connection_id", "request_id",
    ]

    /// A typing or custom event (``SignalDelivery``) as Stream sends it: `TypingStartEvent`,
    /// `TypingStopEvent` (with `parent_id` in a thread), or `CustomEvent` with the sender's other
    /// fields at the top level and its `custom` object (empty when it gave none), as every recipient
    /// gets it. Never carries counts.
    public static func encode(signal delivery: SignalDelivery) -> EncodedEvent {
        var writer = JSONWriter(capacity: 1024)
        writer.beginObject()
        writer.field("type", delivery.signal.type)
        writer.field("cid", delivery.cid)
        writer.field("channel_id", delivery.cid.id)
        writer.field("channel_type", delivery.cid.type)
        writer.field("created_at", delivery.createdAt)
        switch delivery.signal {
        case .typingStart(let parentID), .typingStop(let parentID):
            writer.key("custom")
            writer.beginObject()
            writer.endObject()
            writer.fieldIfPresent("parent_id", parentID)
        case .custom(_, let fields):
            let given = fields.objectValue ?? []
            for (key, value) in given where !signalKeys.contains(key) {
                writer.key(key)
                writer.value(value)
            }
            writer.key("custom")
            if case .object? = fields["custom"] { writer.value(fields["custom"]!) } else {
                writer.beginObject()
                writer.endObject()
            }
        }
        writer.key("user")
        write(user: delivery.user, into: &writer)
        writer.endObject()
        return EncodedEvent(stored: writer.bytes, carriesCounts: false)
    }
}
