/// Entities in Stream Chat's JSON shapes (field names exactly as Stream's clients read them).
public enum StreamJSON {
    /// A user as others see it (no privacy settings).
    public static func write(user: User, into writer: inout JSONWriter, includePrivacy: Bool = false) {
        writer.beginObject()
        writer.field("id", user.id)
        writer.fieldIfPresent("name", user.name)
        writer.fieldIfPresent("image", user.image)
        writer.field("role", "user")
        for (key, value) in user.custom {
            writer.key(key)
            writer.value(value)
        }
        if includePrivacy { write(privacy: user.privacy, into: &writer) }
        writer.field("created_at", user.createdAt)
        writer.field("updated_at", user.updatedAt)
        writer.endObject()
    }

    public static func write(privacy: PrivacySettings, into writer: inout JSONWriter) {
        writer.key("privacy_settings")
        writer.beginObject()
        writer.key("read_receipts")
        writer.beginObject()
        writer.field("enabled", privacy.readReceipts)
        writer.endObject()
        writer.key("delivery_receipts")
        writer.beginObject()
        writer.field("enabled", privacy.deliveryReceipts)
        writer.endObject()
        writer.endObject()
    }

    public static func write(message: Message, sender: User?, into writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("id", message.id)
        writer.field("text", message.text)
        writer.field("html", "")
        writer.field("type", message.kind.rawValue)
        writer.key("user")
        if let sender { write(user: sender, into: &writer) } else {
            writer.beginObject()
            writer.field("id", message.userID)
            writer.endObject()
        }
        writer.field("cid", message.cid.description)
        writer.field("created_at", message.createdAt)
        writer.field("updated_at", message.createdAt)
        if let parent = message.parentID {
            writer.field("parent_id", parent)
            writer.field("show_in_channel", message.showInChannel)
        }
        writer.field("silent", message.silent)
        for empty in ["attachments", "mentioned_users", "latest_reactions", "own_reactions"] {
            writer.key(empty)
            writer.beginArray()
            writer.endArray()
        }
        writer.key("reaction_counts")
        writer.beginObject()
        writer.endObject()
        writer.field("reply_count", 0)
        writer.endObject()
    }

    public static func write(readState view: ReadStateView, into writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("user")
        write(user: view.user, into: &writer)
        if let lastRead = view.lastRead { writer.field("last_read", lastRead) }
        writer.fieldIfPresent("last_read_message_id", view.lastReadMessageID)
        if let unread = view.unreadMessages { writer.field("unread_messages", unread) }
        writer.fieldIfPresent("first_unread_message_id", view.firstUnreadMessageID)
        if let at = view.lastDeliveredAt { writer.field("last_delivered_at", at) }
        writer.fieldIfPresent("last_delivered_message_id", view.lastDeliveredMessageID)
        writer.endObject()
    }

    /// Encodes an event once for all its recipients. `channelSeq`, the event's place in its channel's
    /// journal, goes out as `channel_seq`: what a client passes back to resume the channel.
    public static func encode(_ event: ReceiptsEvent, channelSeq: Int64? = nil) -> EncodedEvent {
        var writer = JSONWriter(capacity: 512)
        writer.beginObject()
        writer.field("type", event.type)
        if let cid = event.cid {
            writer.field("cid", cid.description)
            writer.field("channel_id", cid.id)
            writer.field("channel_type", cid.type)
        }
        if let channelSeq { writer.field("channel_seq", Int(channelSeq)) }
        writer.field("created_at", event.createdAt)
        switch event.payload {
        case .messageNew(let message, let sender, let watcherCount):
            writer.field("message_id", message.id)
            writer.key("message")
            write(message: message, sender: sender, into: &writer)
            writer.key("user")
            write(user: sender, into: &writer)
            writer.field("watcher_count", watcherCount)
        case .notificationMessageNew(let message, let sender, let channel):
            writer.field("message_id", message.id)
            writer.key("message")
            write(message: message, sender: sender, into: &writer)
            writer.key("channel")
            writer.beginObject()
            writer.field("id", channel.cid.id)
            writer.field("type", channel.cid.type)
            writer.field("cid", channel.cid.description)
            writer.fieldIfPresent("created_by_id", channel.createdBy)
            writer.field("created_at", channel.createdAt)
            writer.field("member_count", channel.memberCount)
            writer.endObject()
        case .messageRead(let user, let lastReadMessageID):
            writer.key("user")
            write(user: user, into: &writer)
            writer.fieldIfPresent("last_read_message_id", lastReadMessageID)
        case .messageDelivered(let user, let messageID, let at):
            writer.key("user")
            write(user: user, into: &writer)
            writer.field("last_delivered_message_id", messageID)
            writer.field("last_delivered_at", at)
        case .notificationMarkRead(let user, let lastReadMessageID):
            writer.key("user")
            write(user: user, into: &writer)
            writer.fieldIfPresent("last_read_message_id", lastReadMessageID)
        case .notificationMarkUnread(let user, let firstUnread, let lastReadMessageID, let lastReadAt, let unread):
            writer.key("user")
            write(user: user, into: &writer)
            writer.field("first_unread_message_id", firstUnread)
            writer.fieldIfPresent("last_read_message_id", lastReadMessageID)
            writer.field("last_read_at", lastReadAt)
            writer.field("unread_messages", unread)
        }
        // The object stays open: each recipient's counts and the closing brace follow.
        return EncodedEvent(prefix: writer.bytes, carriesCounts: ReceiptsEventPayload.carriesCounts(type: event.type))
    }
}
