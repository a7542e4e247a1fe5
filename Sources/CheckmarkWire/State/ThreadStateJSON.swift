import CheckmarkCore

/// Threads as Stream's `QueryThreads` and `GetThread` answer them (`ThreadStateResponse`): the
/// thread's channel and parent message, its newest replies, its participants and their read states
/// as `viewer` may see them (rules 6 and 8: others' reads only where their read receipts and the
/// channel type's `read_events` are on; the viewer's own always).
package enum ThreadStateJSON {
    /// How many replies and participants each thread lists.
    package struct Limits: Sendable {
        package var replies: Int
        package var participants: Int

        package init(replies: Int, participants: Int) {
            self.replies = replies
            self.participants = participants
        }
    }

    /// `{"threads": [...], "next": ...}`: `next` when more threads follow the page.
    /// - Throws: ``ArchivedTexts/Missing`` naming every text the page needs that is archived;
    ///   `channelsNotLoaded` for a thread's dormant channel; `unknown_message` for a parent gone.
    package static func threads(_ page: [ThreadCursor], next: ThreadCursor?, engine: ReceiptsEngine, viewer: String, limits: Limits,
                                archived: ArchivedTexts) throws -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("threads")
        w.beginArray()
        var missing: ArchivedTexts.Missing?
        for thread in page {
            do {
                try write(thread.parentID, in: thread.cid, engine: engine, viewer: viewer, limits: limits, archived: archived, into: &w)
            } catch let needed as ArchivedTexts.Missing {
                if missing == nil { missing = needed } else { missing!.formUnion(needed) }
            }
        }
        if let missing { throw missing }
        w.endArray()
        if let next { w.field("next", next.token) }
        w.endObject()
        return w.bytes
    }

    /// `{"thread": {...}}`: the thread of `parentID` in `cid`.
    package static func thread(_ parentID: String, in cid: ChannelCID, engine: ReceiptsEngine, viewer: String, limits: Limits,
                               archived: ArchivedTexts) throws -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("thread")
        try write(parentID, in: cid, engine: engine, viewer: viewer, limits: limits, archived: archived, into: &w)
        w.endObject()
        return w.bytes
    }

    private static func write(_ parentID: String, in cid: ChannelCID, engine: ReceiptsEngine, viewer: String, limits: Limits,
                              archived: ArchivedTexts, into w: inout JSONWriter) throws {
        let channel = try engine.channel(cid)
        guard let parent = channel.messages.position(of: parentID) else { throw ReceiptsError.unknownMessage(parentID) }
        let thread = channel.threads[parentID] ?? MessageThread(parentID: parentID)
        let replies = thread.replyPositions.suffix(max(0, limits.replies))
        try archived.require([parent] + replies, of: channel.messages)
        let parentMessage = try ListedMessage(at: parent, of: channel, engine: engine, archived: archived, viewer: viewer)
        let author = channel.messages.userID(at: parent)
        let lastReplyAt = thread.replyPositions.last.map { channel.messages.createdAt(at: $0) }
        let summary = engine.summary(of: channel)
        w.beginObject()
        w.field("channel_cid", cid)
        w.key("channel")
        StreamJSON.write(channel: summary, into: &w)
        w.field("parent_message_id", parentID)
        w.key("parent_message")
        parentMessage.encode(into: &w)
        w.field("created_by_user_id", author)
        w.key("created_by")
        StreamJSON.write(user: engine.users[author] ?? User(id: author), into: &w)
        w.field("created_at", channel.messages.createdAt(at: parent))
        w.field("updated_at", lastReplyAt ?? channel.messages.createdAt(at: parent))
        if let lastReplyAt { w.field("last_message_at", lastReplyAt) }
        w.field("reply_count", thread.replyPositions.count)
        w.field("participant_count", thread.reads.count)
        w.field("active_participant_count", thread.reads.count)
        w.field("title", parentMessage.message.text)
        w.key("custom")
        w.beginObject()
        w.endObject()
        w.key("latest_replies")
        w.beginArray()
        for position in replies { try ListedMessage(at: position, of: channel, engine: engine, archived: archived, viewer: viewer).encode(into: &w) }
        w.endArray()
        // Participants in the order they joined: the parent's author, then by their first reply,
        // then those who only read it (by when they read).
        // One pass over the replies: each participant's first reply (when it joined) and last.
        var joined: [String: Timestamp] = [:]
        var lastReply: [String: Timestamp] = [:]
        for position in thread.replyPositions {
            let user = channel.messages.userID(at: position)
            let at = channel.messages.createdAt(at: position)
            if joined[user] == nil { joined[user] = at }
            lastReply[user] = at
        }
        if thread.reads[author] != nil { joined[author] = channel.messages.createdAt(at: parent) }
        // A participant's read time shows only where its read state may (rules 6 and 8): one who only
        // read the thread and hides it joined, as far as the caller can tell, with the thread.
        func visible(_ user: String) -> Bool {
            user == viewer || (summary.type.readEvents && engine.users[user]?.privacy.readReceipts != false)
        }
        for user in thread.reads.keys where joined[user] == nil {
            joined[user] = visible(user) ? thread.reads[user]!.lastRead : channel.messages.createdAt(at: parent)
        }
        let participants = thread.reads.keys.sorted { a, b in
            joined[a]! != joined[b]! ? joined[a]! < joined[b]! : a < b
        }
        w.key("thread_participants")
        w.beginArray()
        for user in participants.prefix(max(0, limits.participants)) {
            w.beginObject()
            w.field("channel_cid", cid)
            w.field("thread_id", parentID)
            w.field("user_id", user)
            w.key("user")
            StreamJSON.write(user: engine.users[user] ?? User(id: user), into: &w)
            w.field("created_at", joined[user]!)
            w.field("last_read_at", visible(user) ? thread.reads[user]!.lastRead : joined[user]!)
            if let last = lastReply[user] { w.field("last_thread_message_at", last) }
            w.key("custom")
            w.beginObject()
            w.endObject()
            w.endObject()
        }
        w.endArray()
        w.key("read")
        w.beginArray()
        for user in participants {
            guard let read = thread.reads[user], let profile = engine.users[user], visible(user) else { continue }
            w.beginObject()
            w.key("user")
            StreamJSON.write(user: profile, into: &w)
            w.field("last_read", read.lastRead)
            w.fieldIfPresent("last_read_message_id", read.lastReadMessageID)
            w.field("unread_messages", read.unreadReplies)
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }
}
