import CheckmarkCore
/// Entities in Stream Chat's JSON shapes (field names exactly as Stream's clients read them). Every
/// field Stream's API description marks required is written, features Checkmark does not have in
/// their empty form (`mutes: []`, `banned: false`), so that clients that dereference them work.
public enum StreamJSON {
    /// A user (`UserResponse`): reserved fields, the custom fields both at the top level (where
    /// Stream's SDKs read them) and under `custom`, and the empty forms of what Checkmark does not
    /// track. `online` is whether the user has a connection open, where the caller knows it.
    public static func write(user: User, into writer: inout JSONWriter, includePrivacy: Bool = false, online: Bool = false) {
        writer.beginObject()
        writeUserFields(user, into: &writer, includePrivacy: includePrivacy, online: online)
        writer.endObject()
    }

    /// The connected user as `health.check`'s `me` (`OwnUserResponse`): the user with privacy
    /// settings, its totals, and the empty lists the SDKs copy into the client (mutes, channel mutes,
    /// devices).
    public static func write(ownUser user: User, counts: UnreadCounts, into writer: inout JSONWriter) {
        writer.beginObject()
        writeUserFields(user, into: &writer, includePrivacy: true, online: true)
        writer.field("invisible", false)
        for empty in ["devices", "mutes", "channel_mutes"] { writeEmptyArray(empty, into: &writer) }
        writer.field("total_unread_count", counts.totalUnread)
        writer.field("unread_count", counts.totalUnread)
        writer.field("unread_channels", counts.unreadChannels)
        writer.field("unread_threads", counts.unreadThreads)
        writer.endObject()
    }

    private static func writeUserFields(_ user: User, into writer: inout JSONWriter, includePrivacy: Bool, online: Bool) {
        writer.field("id", user.id)
        writer.fieldIfPresent("name", user.name)
        writer.fieldIfPresent("image", user.image)
        writer.field("role", "user")
        for (key, value) in user.custom {
            writer.key(key)
            writer.value(value)
        }
        writer.key("custom")
        writer.value(.object(user.custom))
        writer.field("banned", false)
        writer.field("online", online)
        writer.field("language", "")
        writeEmptyArray("teams", into: &writer)
        writeEmptyArray("blocked_user_ids", into: &writer)
        if includePrivacy { write(privacy: user.privacy, into: &writer) }
        writer.field("created_at", user.createdAt)
        writer.field("updated_at", user.updatedAt)
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
        writer.key("typing_indicators")
        writer.beginObject()
        writer.field("enabled", privacy.typingIndicators)
        writer.endObject()
        writer.endObject()
    }

    /// A message (`MessageResponse`). `replyCount` is the thread's size for a parent message (0 in the
    /// event that announces a new message). `viewer`'s reactions are its `own_reactions` (none for
    /// nil: events, a server's view); reactors are written as `users` gives them, else as the
    /// message's ``Message/reactionUsers`` holds them.
    public static func write(message: Message, sender: User?, replyCount: Int = 0, viewer: String? = nil,
                             users: ((String) -> User?)? = nil, into writer: inout JSONWriter) {
        write(message: message, replyCount: replyCount, viewer: viewer, users: users, into: &writer) { writer in
            write(user: sender ?? User(id: message.userID), into: &writer)
        }
    }

    /// ``write(message:sender:replyCount:viewer:users:into:)`` with the sender written by `writeSender`.
    package static func write(message: Message, replyCount: Int, viewer: String? = nil, users: ((String) -> User?)? = nil,
                              into writer: inout JSONWriter, writeSender: (inout JSONWriter) -> Void) {
        writer.beginObject()
        writer.field("id", message.id)
        writer.field("text", message.text)
        writer.field("html", "")
        writer.field("type", message.streamType)
        writer.key("user")
        writeSender(&writer)
        writer.field("cid", message.cid)
        writer.field("created_at", message.createdAt)
        writer.field("updated_at", message.revision?.updatedAt ?? message.createdAt)
        if let revision = message.revision {
            if let at = revision.textUpdatedAt { writer.field("message_text_updated_at", at) }
            if let at = revision.deletedAt { writer.field("deleted_at", at) }
        }
        if let parent = message.parentID {
            writer.field("parent_id", parent)
            writer.field("show_in_channel", message.showInChannel)
        }
        writer.field("silent", message.silent)
        // The fields of a message without reactions in the order and bytes they always had: the
        // journal writes `message.new`'s message again from its row and checks it byte for byte.
        for empty in ["attachments", "mentioned_users"] { writeEmptyArray(empty, into: &writer) }
        if message.reactions.isEmpty {
            for empty in ["latest_reactions", "own_reactions", "restricted_visibility"] { writeEmptyArray(empty, into: &writer) }
            for empty in ["reaction_counts", "reaction_scores"] {
                writer.key(empty)
                writer.beginObject()
                writer.endObject()
            }
        } else {
            writeReactions(of: message, viewer: viewer, users: users, into: &writer)
        }
        writer.key("custom")
        writer.beginObject()
        writer.endObject()
        writer.field("reply_count", replyCount)
        writer.field("deleted_reply_count", 0)
        writer.field("mentioned_channel", false)
        writer.field("mentioned_here", false)
        writer.field("pinned", false)
        writer.field("shadowed", false)
        writer.endObject()
    }

    /// A message's reactions: `latest_reactions` (newest first), `own_reactions` (`viewer`'s, newest
    /// first), then (after `restricted_visibility`, where a message without reactions has it)
    /// `reaction_counts`, `reaction_scores` and `reaction_groups` per type, in the order each type
    /// was first given.
    private static func writeReactions(of message: Message, viewer: String?, users lookUp: ((String) -> User?)?, into writer: inout JSONWriter) {
        let reactions = message.reactions
        func users(_ id: String) -> User? { lookUp?(id) ?? message.reactionUsers[id] }
        let limit = Message.latestReactionsLimit
        writer.key("latest_reactions")
        writer.beginArray()
        for reaction in reactions.suffix(limit).reversed() { write(reaction: reaction, messageID: message.id, user: users(reaction.userID), into: &writer) }
        writer.endArray()
        writer.key("own_reactions")
        writer.beginArray()
        if let viewer {
            for reaction in reactions.reversed().lazy.filter({ $0.userID == viewer }).prefix(limit) {
                write(reaction: reaction, messageID: message.id, user: users(viewer), into: &writer)
            }
        }
        writer.endArray()
        writeEmptyArray("restricted_visibility", into: &writer)
        var types: [String] = []
        var groups: [String: (count: Int, score: Int, first: Timestamp, last: Timestamp)] = [:]
        for reaction in reactions {
            if let group = groups[reaction.type] {
                groups[reaction.type] = (group.count + 1, group.score + reaction.score, min(group.first, reaction.createdAt), max(group.last, reaction.createdAt))
            } else {
                types.append(reaction.type)
                groups[reaction.type] = (1, reaction.score, reaction.createdAt, reaction.createdAt)
            }
        }
        writer.key("reaction_counts")
        writer.beginObject()
        for type in types { writer.field(type, groups[type]!.count) }
        writer.endObject()
        writer.key("reaction_scores")
        writer.beginObject()
        for type in types { writer.field(type, groups[type]!.score) }
        writer.endObject()
        writer.key("reaction_groups")
        writer.beginObject()
        for type in types {
            let group = groups[type]!
            writer.key(type)
            writer.beginObject()
            writer.field("count", group.count)
            writer.field("sum_scores", group.score)
            writer.field("first_reaction_at", group.first)
            writer.field("last_reaction_at", group.last)
            writer.key("latest_reactions_by")
            writer.beginArray()
            for reaction in reactions.reversed().lazy.filter({ $0.type == type }).prefix(limit) {
                writer.beginObject()
                writer.field("user_id", reaction.userID)
                writer.field("created_at", reaction.createdAt)
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
        }
        writer.endObject()
    }

    /// A reaction (`ReactionResponse`), with its user as `user` gives it (just the id when nil).
    public static func write(reaction: Reaction, messageID: String, user: User?, into writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("message_id", messageID)
        writer.field("user_id", reaction.userID)
        writer.key("user")
        write(user: user ?? User(id: reaction.userID), into: &writer)
        writer.field("type", reaction.type)
        writer.field("score", reaction.score)
        writer.field("created_at", reaction.createdAt)
        writer.field("updated_at", reaction.updatedAt)
        writer.key("custom")
        writer.beginObject()
        writer.endObject()
        writer.endObject()
    }

    /// A channel (`ChannelResponse`) with its type's config (`ChannelConfigWithInfo`): the receipt
    /// flags are the type's; the features Checkmark does not have are off.
    public static func write(channel: ChannelSummary, into writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("id", channel.cid.id)
        writer.field("type", channel.cid.type)
        writer.field("cid", channel.cid)
        if let createdBy = channel.createdBy {
            writer.key("created_by")
            write(user: channel.creator ?? User(id: createdBy), into: &writer)
        }
        writer.field("created_at", channel.createdAt)
        writer.field("updated_at", channel.createdAt)
        if let last = channel.lastMessageAt { writer.field("last_message_at", last) }
        writer.field("member_count", channel.memberCount)
        writer.field("disabled", false)
        writer.field("frozen", false)
        writer.key("custom")
        writer.beginObject()
        writer.endObject()
        writer.key("own_capabilities")
        writer.beginArray()
        for capability in ownCapabilities(of: channel.type) { writer.value(.string(capability)) }
        writer.endArray()
        writer.key("config")
        write(config: channel.type, into: &writer)
        writer.endObject()
    }

    /// What a member may do in a channel of `type`, in Stream's capability names: read and send
    /// messages and replies, and the receipts, typing and custom events the type has on.
    public static func ownCapabilities(of type: ChannelType) -> [String] {
        let index = (type.readEvents ? 1 : 0) | (type.deliveryEvents ? 2 : 0) | (type.typingEvents ? 4 : 0) | (type.customEvents ? 8 : 0)
        return capabilitiesByFlags[index]
    }

    // Made once: events that carry a channel object write them for every recipient batch. Indexed by
    // the flags as ``ownCapabilities(of:)`` combines them.
    private static let capabilitiesByFlags: [[String]] = (0..<16).map { flags in
        var capabilities = ["read-channel", "send-message", "send-reply", "quote-message"]
        if flags & 1 != 0 { capabilities.append("read-events") }
        if flags & 2 != 0 { capabilities.append("delivery-events") }
        if flags & 4 != 0 { capabilities += ["send-typing-events", "typing-events"] }
        if flags & 8 != 0 { capabilities.append("send-custom-events") }
        return capabilities
    }
    /// The config flags of features Checkmark does not have.
    private static let featuresOff = [
        "connect_events", "count_messages", "mark_messages_pending", "mutes", "polls",
        "push_notifications", "quotes", "reactions", "reminders", "search", "shared_locations",
        "skip_last_msg_update_for_system_msgs", "uploads", "url_enrichment", "user_message_reminders",
    ]

    /// A channel type's config as Stream's `ChannelConfigWithInfo`.
    public static func write(config type: ChannelType, into writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("name", type.name)
        writer.field("read_events", type.readEvents)
        writer.field("delivery_events", type.deliveryEvents)
        writer.field("typing_events", type.typingEvents)
        writer.field("custom_events", type.customEvents)
        writer.field("replies", true)
        for off in featuresOff { writer.field(off, false) }
        writer.field("max_message_length", ReceiptsEngine.maxMessageTextBytes)
        writer.field("message_retention", "infinite")
        writer.field("automod", "disabled")
        writer.field("automod_behavior", "flag")
        writeEmptyArray("commands", into: &writer)
        writer.field("created_at", type.createdAt)
        writer.field("updated_at", type.updatedAt)
        writer.endObject()
    }

    /// A thread as a thread read's `message.read` carries it (Stream's `ThreadResponse` fields).
    public static func write(thread: ThreadSummary, into writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("channel_cid", thread.cid)
        writer.field("parent_message_id", thread.parentID)
        writer.field("created_by_user_id", thread.createdBy)
        writer.field("title", thread.title)
        writer.field("reply_count", thread.replyCount)
        writer.field("participant_count", thread.participantCount)
        writer.field("active_participant_count", thread.participantCount)
        writer.field("created_at", thread.createdAt)
        writer.field("updated_at", thread.lastMessageAt ?? thread.createdAt)
        if let last = thread.lastMessageAt { writer.field("last_message_at", last) }
        writer.key("custom")
        writer.beginObject()
        writer.endObject()
        writer.endObject()
    }

    public static func write(readState view: ReadStateView, into writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("user")
        write(user: view.user, into: &writer)
        // Hidden read fields (rules 6, 8) read as "nothing read since joining": Stream requires both.
        writer.field("last_read", view.lastRead ?? view.memberSince)
        writer.fieldIfPresent("last_read_message_id", view.lastReadMessageID)
        writer.field("unread_messages", view.unreadMessages ?? 0)
        writer.fieldIfPresent("first_unread_message_id", view.firstUnreadMessageID)
        if let at = view.lastDeliveredAt { writer.field("last_delivered_at", at) }
        writer.fieldIfPresent("last_delivered_message_id", view.lastDeliveredMessageID)
        writer.endObject()
    }

    package static func writeEmptyArray(_ name: String, into writer: inout JSONWriter) {
        writer.key(name)
        writer.beginArray()
        writer.endArray()
    }

    /// Encodes an event once for all its recipients. `channelSeq`, the event's place in its channel's
    /// journal, goes out as `channel_seq`: what a client passes back to resume the channel.
    public static func encode(_ event: ReceiptsEvent, channelSeq: Int64? = nil) -> EncodedEvent {
        encode(event, channelSeq: channelSeq, writeUser: { user, writer in write(user: user, into: &writer) },
               writeChannel: { channel, writer in write(channel: channel, into: &writer) })
    }

    /// ``encode(_:channelSeq:)``, taking the event's users from `users` and its channel object from
    /// `channels` when they were written before (byte for byte the same JSON).
    public static func encode(_ event: ReceiptsEvent, channelSeq: Int64? = nil, users: inout UserJSONCache,
                              channels: inout ChannelJSONCache) -> EncodedEvent {
        encode(event, channelSeq: channelSeq, writeUser: { user, writer in writer.raw(users.json(for: user)) },
               writeChannel: { channel, writer in writer.raw(channels.json(for: channel)) })
    }

    private static func encode(_ event: ReceiptsEvent, channelSeq: Int64?, writeUser: (User, inout JSONWriter) -> Void,
                               writeChannel: (ChannelSummary, inout JSONWriter) -> Void) -> EncodedEvent {
        // Events with a channel object are about 2 KiB, the others about 1 KiB: one allocation each.
        var writer = JSONWriter(capacity: event.payload.carriesChannelObject ? 3072 : 1024)
        var messageObject: Range<Int>?
        var channelObject: Range<Int>?
        writer.beginObject()
        writer.field("type", event.type)
        if let cid = event.cid {
            writer.field("cid", cid)
            writer.field("channel_id", cid.id)
            writer.field("channel_type", cid.type)
        }
        if let channelSeq { writer.field("channel_seq", Int(channelSeq)) }
        writer.field("created_at", event.createdAt)
        writer.key("custom")
        writer.beginObject()
        writer.endObject()
        switch event.payload {
        case .messageNew(let message, let sender, let watcherCount):
            writer.field("message_id", message.id)
            writer.key("message")
            let messageStart = writer.count
            var senderInMessage = 0..<0
            write(message: message, replyCount: 0, into: &writer) { writer in
                let start = writer.count
                writeUser(sender, &writer)
                senderInMessage = start..<writer.count
            }
            let messageEnd = writer.count
            writer.key("user")
            let senderStart = writer.count
            writeUser(sender, &writer)
            // The journal keeps the message object once, in storage, when the event's `user` can
            // stand in for the sender in it (``wholeJSON(of:)``).
            if writer.bytes[senderInMessage].elementsEqual(writer.bytes[senderStart..<writer.count]) {
                messageObject = messageStart..<messageEnd
            }
            writer.field("watcher_count", watcherCount)
        case .notificationMessageNew(let message, let sender, let channel, let watcherCount),
             .notificationThreadMessageNew(let message, let sender, let channel, let watcherCount):
            writer.field("message_id", message.id)
            if case .notificationThreadMessageNew = event.payload { writer.fieldIfPresent("thread_id", message.parentID) }
            writer.key("message")
            write(message: message, sender: sender, into: &writer)
            writer.key("user")
            writeUser(sender, &writer)
            writer.key("channel")
            writeChannel(channel, &writer)
            writer.field("watcher_count", watcherCount)
        case .messageUpdated(let message, let sender, let editor, let replyCount):
            writer.field("message_id", message.id)
            writer.key("message")
            write(message: message, sender: sender, replyCount: replyCount, into: &writer)
            writer.key("user")
            writeUser(editor, &writer)
        case .messageDeleted(let message, let sender, let editor, let hard, let replyCount):
            writer.field("message_id", message.id)
            writer.key("message")
            write(message: message, sender: sender, replyCount: replyCount, into: &writer)
            writer.key("user")
            writeUser(editor, &writer)
            writer.field("hard_delete", hard)
            writer.field("deleted_for_me", false)
        case .reaction(_, let message, let sender, let reaction, let user, let channel, let replyCount):
            writer.field("message_id", message.id)
            writer.key("message")
            write(message: message, sender: sender, replyCount: replyCount, into: &writer)
            writer.key("reaction")
            write(reaction: reaction, messageID: message.id, user: user, into: &writer)
            writer.key("user")
            writeUser(user, &writer)
            writer.key("channel")
            let start = writer.count
            writeChannel(channel, &writer)
            channelObject = start..<writer.count
        case .messageRead(let user, let lastReadMessageID, let thread):
            writer.key("user")
            writeUser(user, &writer)
            writer.fieldIfPresent("last_read_message_id", lastReadMessageID)
            if let thread {
                writer.key("thread")
                write(thread: thread, into: &writer)
            }
        case .messageDelivered(let user, let messageID, let at):
            writer.key("user")
            writeUser(user, &writer)
            writer.field("last_delivered_message_id", messageID)
            writer.field("last_delivered_at", at)
        case .notificationMarkRead(let user, let lastReadMessageID, let thread, let channel):
            writer.key("user")
            writeUser(user, &writer)
            writer.fieldIfPresent("last_read_message_id", lastReadMessageID)
            if let thread {
                writer.field("thread_id", thread.parentID)
                writer.key("thread")
                write(thread: thread, into: &writer)
            }
            if let channel {
                writer.key("channel")
                let start = writer.count
                writeChannel(channel, &writer)
                channelObject = start..<writer.count
            }
        case .notificationMarkUnread(let user, let firstUnread, let lastReadMessageID, let lastReadAt, let unread):
            writer.key("user")
            writeUser(user, &writer)
            writer.field("first_unread_message_id", firstUnread)
            writer.fieldIfPresent("last_read_message_id", lastReadMessageID)
            writer.field("last_read_at", lastReadAt)
            writer.field("unread_messages", unread)
        }
        // Closed without counts: recipients' counts, where carried, go before the closing brace.
        writer.endObject()
        return EncodedEvent(stored: writer.bytes, carriesCounts: ReceiptsEventPayload.carriesCounts(type: event.type), messageObject: messageObject,
                            channelObject: channelObject)
    }
}
