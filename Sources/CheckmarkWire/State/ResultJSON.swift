import CheckmarkCore

/// The JSON results the gateway's replies and the REST API share.
public enum ResultJSON {
    /// `{"message": ...}` for an outcome with a message (a send, an edit, a delete), the author's
    /// profile included; with `"reaction"` for a reaction's.
    package static func message(_ outcome: ReceiptsOutcome, engine: ReceiptsEngine) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        // A thread's parent with its thread's size, as a query lists it (0 for a new message).
        func replies(_ message: Message) -> Int { engine.channels[message.cid]?.threads[message.id]?.replyPositions.count ?? 0 }
        // The message as the engine holds it now where it can (a cluster node's answer to a command
        // its shard's owner applied carries neither text nor revision nor reactions: made after the
        // node caught up with that owner's commit); the outcome's otherwise.
        func current(_ message: Message) -> Message {
            guard let log = engine.channels[message.cid]?.messages, let position = log.position(of: message.id),
                  let held = log.message(at: position) else { return message }
            return held
        }
        switch outcome.result {
        case .message(let sent):
            let message = current(sent)
            w.key("message")
            StreamJSON.write(message: message, sender: engine.users[message.userID], replyCount: replies(message),
                             users: { engine.users[$0] }, into: &w)
        case .reaction(let reacted, let reaction):
            let message = current(reacted)
            // The reacting user's view: its reactions are the message's `own_reactions`.
            w.key("message")
            StreamJSON.write(message: message, sender: engine.users[message.userID], replyCount: replies(message), viewer: reaction.userID,
                             users: { engine.users[$0] }, into: &w)
            w.key("reaction")
            StreamJSON.write(reaction: reaction, messageID: message.id, user: engine.users[reaction.userID], into: &w)
        case .none, .user, .channelType, .channel:
            break
        }
        w.endObject()
        return w.bytes
    }

    /// Most members listed in a channel state (Stream's limit as well).
    package static let memberListLimit = 100
    /// Messages in a channel state unless the request asks for another number.
    public static let defaultMessageLimit = 25
    /// Most messages a channel state may ask for.
    package static let maxMessageLimit = 300

    /// The watch reply and a channel query's answer: the channel, its members (at most
    /// ``memberListLimit``, most recently added first), the page of its channel messages that
    /// `messages` selects (thread-only replies are never among them), the read states as the viewer may
    /// see them (rule 10), the viewer's membership and the watcher count. An empty viewer is a third
    /// party (a server-side call naming no user): privacy applies to every member.
    /// `watcherCount`: the whole cluster's (``ReceiptsService/clusterWatcherCount(_:)``); the engine's
    /// own count when nil. A paging cursor naming no message of the channel is `invalid_argument`.
    /// `fragments` keeps the channel's lists encoded for the next state of it; the bytes are the same
    /// with or without it. Messages whose texts are archived are written with `archived`'s; a page
    /// needing one it lacks throws ``ArchivedTexts/Missing`` (read them, and write again).
    public static func channelState(engine: ReceiptsEngine, cid: ChannelCID, viewer: String,
                                    messages: MessagePagination = MessagePagination(limit: defaultMessageLimit),
                                    watcherCount: Int? = nil, fragments: inout ChannelStateFragments,
                                    archived: ArchivedTexts = ArchivedTexts()) throws -> [UInt8] {
        var w = JSONWriter(capacity: 0)
        try writeChannelState(engine: engine, cid: cid, viewer: viewer, messages: messages, watcherCount: watcherCount,
                              fragments: &fragments, archived: archived, into: &w)
        return w.bytes
    }

    /// ``channelState(engine:cid:viewer:messages:watcherCount:fragments:archived:)`` with nothing kept.
    package static func channelState(engine: ReceiptsEngine, cid: ChannelCID, viewer: String,
                                     messages: MessagePagination = MessagePagination(limit: defaultMessageLimit),
                                     watcherCount: Int? = nil) throws -> [UInt8] {
        var nothingKept = ChannelStateFragments(budgetBytes: 0)
        return try channelState(engine: engine, cid: cid, viewer: viewer, messages: messages, watcherCount: watcherCount,
                                fragments: &nothingKept)
    }

    /// Writes ``channelState(engine:cid:viewer:messages:watcherCount:fragments:archived:)`` into `w`.
    package static func writeChannelState(engine: ReceiptsEngine, cid: ChannelCID, viewer: String, messages pagination: MessagePagination,
                                          watcherCount: Int? = nil, fragments: inout ChannelStateFragments,
                                          archived: ArchivedTexts = ArchivedTexts(), into w: inout JSONWriter) throws {
        let channel = try engine.channel(cid)
        let page = try pagination.page(of: channel.channelMessagePositions, in: channel.messages, prefix: "messages.")
        // Before anything is written: all the page's archived texts are read in one go.
        try archived.require(page, of: channel.messages)
        var lists = fragments.take(cid)
        defer { fragments.keep(lists, for: cid) }
        lists.members.update(to: ListedMember.listed(in: channel, engine: engine))
        // Rule 10's list: each listed member's read state as others may see it, the viewer's own
        // written in its place.
        let (listedReads, ownPlace) = engine.readStateListing(of: channel, viewer: viewer)
        lists.reads.update(to: listedReads.map { ListedReadState(userID: $0, view: engine.view(of: $0, in: channel, viewer: "")) })
        lists.messages.update(to: try page.map { position throws(ArchivedTexts.Missing) in
            try ListedMessage(at: position, of: channel, engine: engine, archived: archived, viewer: viewer)
        })

        // The lists and about 2 KB for the rest, reserved at once.
        w.reserveCapacity(lists.members.bytes.count + lists.reads.bytes.count + lists.messages.bytes.count + 2048)
        w.beginObject()
        w.key("channel")
        writeChannel(channel, engine: engine, into: &w)
        w.key("members")
        w.raw(lists.members.bytes)
        if let member = channel.members[viewer], let user = engine.users[viewer] {
            w.key("membership")
            writeMember(user: user, memberSince: member.createdAt, online: engine.isOnline(viewer), into: &w)
        }
        w.field("watcher_count", watcherCount ?? channel.watchingUsers.count)
        w.key("read")
        if let ownPlace {
            w.beginArray()
            lists.reads.writeElements(0..<ownPlace, into: &w)
            if let own = engine.view(of: viewer, in: channel, viewer: viewer) { StreamJSON.write(readState: own, into: &w) }
            lists.reads.writeElements(ownPlace + 1..<listedReads.count, into: &w)
            w.endArray()
        } else {
            w.raw(lists.reads.bytes)
        }
        w.key("messages")
        w.raw(lists.messages.bytes)
        for empty in ["pinned_messages", "threads", "watchers"] {
            w.key(empty)
            w.beginArray()
            w.endArray()
        }
        w.endObject()
    }

    /// The messages at `positions` of `channel`, each with its author and its thread's reply count
    /// (`viewer`'s reactions as `own_reactions`); archived texts from `archived`.
    /// - Throws: ``ArchivedTexts/Missing`` for archived texts `archived` lacks (nothing is written).
    package static func writeMessages(_ positions: ArraySlice<Int>, of channel: Channel, engine: ReceiptsEngine,
                                      archived: ArchivedTexts, viewer: String?, into w: inout JSONWriter) throws(ArchivedTexts.Missing) {
        try archived.require(positions, of: channel.messages)
        w.beginArray()
        for position in positions {
            try ListedMessage(at: position, of: channel, engine: engine, archived: archived, viewer: viewer).encode(into: &w)
        }
        w.endArray()
    }

    /// Stream's channel object (``StreamJSON/write(channel:into:)``).
    package static func writeChannel(_ channel: Channel, engine: ReceiptsEngine, into w: inout JSONWriter) {
        StreamJSON.write(channel: engine.summary(of: channel), into: &w)
    }

    /// Stream's channel member object (`ChannelMemberResponse`) of `user`, a member since `memberSince`.
    package static func writeMember(user: User, memberSince: Timestamp, online: Bool, into w: inout JSONWriter) {
        w.beginObject()
        w.field("user_id", user.id)
        w.key("user")
        StreamJSON.write(user: user, into: &w, online: online)
        w.field("created_at", memberSince)
        w.field("updated_at", memberSince)
        w.field("role", "member")
        w.field("channel_role", "channel_member")
        w.field("banned", false)
        w.field("shadow_banned", false)
        w.field("notifications_muted", false)
        w.key("custom")
        w.beginObject()
        w.endObject()
        w.endObject()
    }

    /// A channel type's settings as Stream returns them (only the receipt flags are Checkmark's).
    package static func writeChannelType(_ type: ChannelType, into w: inout JSONWriter) {
        w.beginObject()
        w.field("name", type.name)
        w.field("read_events", type.readEvents)
        w.field("delivery_events", type.deliveryEvents)
        w.field("typing_events", type.typingEvents)
        w.field("custom_events", type.customEvents)
        w.field("created_at", type.createdAt)
        w.field("updated_at", type.updatedAt)
        w.endObject()
    }

    /// A new user from Stream's `user_details` / `users` fields (unknown reserved fields are dropped).
    /// Throws `invalid_argument` when `name`, `image` or `privacy_settings` have the wrong shape.
    package static func user(id: String, details: [(String, JSONValue)]) throws(WireError) -> User {
        guard !id.isEmpty, id.utf8.count <= maxUserIDBytes else { throw .invalid("user id must be 1 to \(maxUserIDBytes) bytes") }
        var user = User(id: id)
        for (key, value) in details {
            switch key {
            case "name", "image":
                if case .null = value { continue }
                guard let text = value.stringValue else { throw .invalid("user \(id): \(key) must be a string") }
                if key == "name" { user.name = text } else { user.image = text }
            case "privacy_settings":
                do { user.privacy = try ReceiptsEngine.privacy(from: value) } catch { throw WireError(error) }
            default:
                if !User.reservedFields.contains(key) { user.custom.append((key, value)) }
            }
        }
        return user
    }

    /// Longest user id, in bytes (Stream's limit is 255 as well).
    package static let maxUserIDBytes = 255
}
