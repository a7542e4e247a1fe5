import CheckmarkCore

/// The bodies of the REST API's answers that are not a channel state or a message (those are
/// ``ResultJSON``'s, shared with the gateway), in the shapes Stream's SDKs read. Each reads the
/// engine as it is when called and writes one JSON object; `duration` is added by the HTTP shell.
package enum RESTResultJSON {
    /// `{"channel": ..., "members": [...]}`: the answer of a channel update (add or remove members,
    /// send a message with it), members most recently added first, at most
    /// ``ResultJSON/memberListLimit``.
    package static func channelWithMembers(_ channel: Channel, engine: ReceiptsEngine) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("channel")
        ResultJSON.writeChannel(channel, engine: engine, into: &w)
        w.key("members")
        w.beginArray()
        for member in ListedMember.listed(in: channel, engine: engine) { member.encode(into: &w) }
        w.endArray()
        w.endObject()
        return w.bytes
    }

    /// `{"channels": [channel state, ...]}` of a channel query, in `cids`' order. `watcherCount`
    /// gives each channel's (cluster-wide) watcher count.
    /// - Throws: what ``ResultJSON/writeChannelState(engine:cid:viewer:messages:watcherCount:fragments:archived:into:)`` throws;
    ///   ``ArchivedTexts/Missing`` naming every channel's missing texts; `channelsNotLoaded` naming
    ///   every dormant channel of the list (loaded together, before any text is asked for).
    package static func channelStates(_ cids: [ChannelCID], engine: ReceiptsEngine, viewer: String, messageLimit: Int,
                                      watcherCount: (ChannelCID) -> Int, fragments: inout ChannelStateFragments,
                                      archived: ArchivedTexts = ArchivedTexts()) throws -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("channels")
        w.beginArray()
        // Every channel's archived texts are asked for at once: one read from storage, not one a channel.
        var missing: ArchivedTexts.Missing?
        let dormant = cids.filter { engine.dormantChannels[$0] != nil }
        if !dormant.isEmpty { throw ReceiptsError.channelsNotLoaded(dormant) }
        for cid in cids {
            do {
                try ResultJSON.writeChannelState(engine: engine, cid: cid, viewer: viewer, messages: MessagePagination(limit: messageLimit),
                                                 watcherCount: watcherCount(cid), fragments: &fragments, archived: archived, into: &w)
            } catch let needed as ArchivedTexts.Missing {
                if missing == nil { missing = needed } else { missing!.formUnion(needed) }
            }
        }
        if let missing { throw missing }
        w.endArray()
        w.endObject()
        return w.bytes
    }

    /// `{"messages": [...]}`: a page of a thread's replies (`positions` into the channel's messages),
    /// archived texts from `archived`.
    /// - Throws: ``ArchivedTexts/Missing`` for archived texts `archived` lacks.
    package static func messages(_ positions: ArraySlice<Int>, of channel: Channel, engine: ReceiptsEngine,
                                 archived: ArchivedTexts, viewer: String?) throws(ArchivedTexts.Missing) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("messages")
        try ResultJSON.writeMessages(positions, of: channel, engine: engine, archived: archived, viewer: viewer, into: &w)
        w.endObject()
        return w.bytes
    }

    /// `{"message": {...}}`: the message at `position` of `channel` as Stream's `GetMessage` answers
    /// it (`MessageWithChannelResponse`): as a channel's messages list it, with its thread's
    /// `reply_count` when it is a parent, and the channel object.
    package static func message(at position: Int, of channel: Channel, engine: ReceiptsEngine,
                                archived: ArchivedTexts, viewer: String?) throws(ArchivedTexts.Missing) -> [UInt8] {
        try archived.require([position][...], of: channel.messages)
        var message = JSONWriter()
        try ListedMessage(at: position, of: channel, engine: engine, archived: archived, viewer: viewer).encode(into: &message)
        var object = JSONWriter()
        ResultJSON.writeChannel(channel, engine: engine, into: &object)
        var bytes = Array(#"{"message":"#.utf8)
        bytes += message.bytes.dropLast()  // the message object, open for one more field
        bytes += Array(#","channel":"#.utf8)
        bytes += object.bytes
        bytes += Array("}}".utf8)
        return bytes
    }

    /// `{"event": {...}}`: a mark-read's answer, the reader's read state in `message.read`'s shape
    /// (`thread_id` when a thread was read).
    package static func readEvent(cid: ChannelCID, user: User, read: ReadState, threadID: String?) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("event")
        w.beginObject()
        w.field("type", "message.read")
        w.field("cid", cid.description)
        w.field("channel_id", cid.id)
        w.field("channel_type", cid.type)
        w.key("user")
        StreamJSON.write(user: user, into: &w)
        w.fieldIfPresent("last_read_message_id", read.lastReadMessageID)
        w.fieldIfPresent("thread_id", threadID)
        w.field("created_at", read.lastRead)
        w.endObject()
        w.endObject()
        return w.bytes
    }

    /// `{message_id, cid, read_by, delivered_to, read_count, delivered_count}`: who read and who
    /// received one message, as the viewer may see it.
    package static func receipts(_ receipts: MessageReceipts, messageID: String, cid: ChannelCID) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.field("message_id", messageID)
        w.field("cid", cid.description)
        for (name, entries) in [("read_by", receipts.readBy), ("delivered_to", receipts.deliveredTo)] {
            w.key(name)
            w.beginArray()
            for entry in entries {
                w.beginObject()
                w.key("user")
                StreamJSON.write(user: entry.user, into: &w)
                w.field(name == "read_by" ? "read_at" : "delivered_at", entry.at)
                w.endObject()
            }
            w.endArray()
        }
        w.field("read_count", receipts.readCount)
        w.field("delivered_count", receipts.deliveredCount)
        w.endObject()
        return w.bytes
    }

    /// Stream's `GET /unread` answer: the totals, per channel (`channel_id` is the cid), per channel
    /// type (types in name order), and the threads with unread replies.
    package static func unreadCounts(channels: [ChannelUnread], threads: [ThreadUnread], unreadThreads: Int) -> [UInt8] {
        var byType: [String: (channels: Int, unread: Int)] = [:]
        for channel in channels where channel.unreadMessages > 0 {
            byType[channel.cid.type, default: (0, 0)].channels += 1
            byType[channel.cid.type, default: (0, 0)].unread += channel.unreadMessages
        }
        var w = JSONWriter()
        w.beginObject()
        w.field("total_unread_count", channels.reduce(0) { $0 + $1.unreadMessages })
        w.field("total_unread_channels", channels.count { $0.unreadMessages > 0 })
        w.field("total_unread_threads_count", unreadThreads)
        w.key("channels")
        w.beginArray()
        for channel in channels {
            w.beginObject()
            w.field("channel_id", channel.cid.description)
            w.field("unread_count", channel.unreadMessages)
            w.field("last_read", channel.lastRead)
            w.endObject()
        }
        w.endArray()
        w.key("channel_type")
        w.beginArray()
        for type in byType.keys.sorted() {
            w.beginObject()
            w.field("channel_type", type)
            w.field("channel_count", byType[type]!.channels)
            w.field("unread_count", byType[type]!.unread)
            w.endObject()
        }
        w.endArray()
        w.key("threads")
        w.beginArray()
        for thread in threads {
            w.beginObject()
            w.field("parent_message_id", thread.parentID)
            w.field("channel_cid", thread.cid.description)
            w.field("unread_count", thread.unreadReplies)
            w.field("last_read", thread.lastRead)
            // Stream requires the field: empty while no reply was read.
            w.field("last_read_message_id", thread.lastReadMessageID ?? "")
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.bytes
    }

    /// `{"users": {id: user}}` with privacy settings: the users an upsert or partial update wrote.
    package static func users(_ users: [User]) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("users")
        w.beginObject()
        for user in users {
            w.key(user.id)
            StreamJSON.write(user: user, into: &w, includePrivacy: true)
        }
        w.endObject()
        w.endObject()
        return w.bytes
    }

    /// One channel type's settings.
    package static func channelType(_ type: ChannelType) -> [UInt8] {
        var w = JSONWriter()
        ResultJSON.writeChannelType(type, into: &w)
        return w.bytes
    }

    /// `{"channel_types": {name: type}}`, names in order.
    package static func channelTypes(_ types: [String: ChannelType]) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("channel_types")
        w.beginObject()
        for name in types.keys.sorted() {
            w.key(name)
            ResultJSON.writeChannelType(types[name]!, into: &w)
        }
        w.endObject()
        w.endObject()
        return w.bytes
    }
}
