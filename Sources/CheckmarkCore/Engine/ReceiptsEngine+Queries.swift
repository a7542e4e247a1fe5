extension ReceiptsEngine {
    /// The channel as Stream's channel object describes it (creator, times, member count, config).
    public func summary(of channel: Channel) -> ChannelSummary {
        ChannelSummary(
            cid: channel.cid, createdBy: channel.createdBy, creator: channel.createdBy.flatMap { users[$0] },
            createdAt: channel.createdAt, lastMessageAt: channel.lastMessageAt, memberCount: channel.members.count,
            type: type(of: channel))
    }

    /// The thread of `parentID` as a thread read's event describes it; nil when the parent is not a
    /// message of the channel or its text (the title) is archived and not recalled.
    public func summary(ofThread parentID: String, in channel: Channel) -> ThreadSummary? {
        guard let index = channel.messages.position(of: parentID), let title = channel.messages.text(at: index) else { return nil }
        let thread = channel.threads[parentID]
        return ThreadSummary(
            cid: channel.cid, parentID: parentID, createdBy: channel.messages.userID(at: index), createdAt: channel.messages.createdAt(at: index),
            lastMessageAt: thread?.replyPositions.last.map { channel.messages.createdAt(at: $0) },
            replyCount: thread?.replyPositions.count ?? 0, participants: thread?.reads.keys.sorted() ?? [], title: title)
    }

    /// The user's read state in each thread it participates in with unread replies, channels in cid
    /// order and threads in parent order. Dormant channels where it has unread replies:
    /// `channelsNotLoaded` (the caller loads them and asks again).
    public func unreadThreads(of userID: String) throws(ReceiptsError) -> [ThreadUnread] {
        _ = try user(userID)
        let dormant = (membership[userID] ?? []).filter { (dormantChannels[$0]?.member(userID)?.unreadThreads ?? 0) > 0 }
        guard dormant.isEmpty else { throw .channelsNotLoaded(dormant.sorted()) }
        var result: [ThreadUnread] = []
        for cid in (membership[userID] ?? []).sorted() {
            guard let channel = channels[cid] else { continue }
            let unread = channel.threads.values.compactMap { thread -> (Int, ThreadUnread)? in
                guard let read = thread.reads[userID], read.unreadReplies > 0,
                      let index = channel.messages.position(of: thread.parentID) else { return nil }
                return (index, ThreadUnread(cid: cid, parentID: thread.parentID, unreadReplies: read.unreadReplies,
                                            lastRead: read.lastRead, lastReadMessageID: read.lastReadMessageID))
            }
            result += unread.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return result
    }
    /// Rule 10: at most ``readStateListLimit`` members, most recently added first, the viewer's own
    /// state always included; others' fields hidden where rules 6-8 say so. Members whose every field
    /// is hidden are left out.
    public func readStates(of cid: ChannelCID, viewer: String) throws(ReceiptsError) -> [ReadStateView] {
        let channel = try channel(cid)
        let (listed, ownPlace) = readStateListing(of: channel, viewer: viewer)
        return listed.indices.compactMap { place in
            view(of: place == ownPlace ? viewer : listed[place], in: channel, viewer: viewer)
        }
    }

    /// Rule 10's choice of members, without their states: the members listed, the same for every
    /// viewer (at most ``readStateListLimit``, most recently added first), and the place of the
    /// viewer's own state among them: its own place, or the last one's when the viewer is a member
    /// listed too far back; nil when the viewer is not a member (others' states only).
    public func readStateListing(of channel: Channel, viewer: String) -> (listed: [String], ownPlace: Int?) {
        // Most recently added first; among members added at the same time, the later-added first. The
        // member order is join-time order (``Channel/memberOrder``): its end, read backwards, is that.
        let listed = Array(channel.memberOrder.reversed().prefix(Self.readStateListLimit))
        guard channel.members[viewer] != nil, !listed.isEmpty else { return (listed, nil) }
        return (listed, listed.firstIndex(of: viewer) ?? listed.count - 1)
    }

    /// One member's read state as `viewer` may see it; nil when nothing of it may be shown.
    public func view(of userID: String, in channel: Channel, viewer: String) -> ReadStateView? {
        guard let member = channel.members[userID], let user = users[userID] else { return nil }
        let type = type(of: channel)
        let own = userID == viewer
        let showRead = own || (type.readEvents && user.privacy.readReceipts)
        let showDelivery = own || (type.deliveryEvents && user.privacy.deliveryReceipts)
        guard showRead || showDelivery else { return nil }
        let read = member.read
        var view = ReadStateView(user: user, memberSince: member.createdAt)
        if showRead {
            view.lastRead = read.lastRead
            view.lastReadMessageID = read.lastReadMessageID
            view.unreadMessages = read.unreadMessages
            // No unread message (rule 4's count is 0): nothing to look for, however far back the pointer.
            view.firstUnreadMessageID = read.markedUnreadMessageID
                ?? (read.unreadMessages > 0 ? firstUnread(in: channel, for: userID, from: read.readPosition) : nil)
        }
        if showDelivery {
            view.lastDeliveredAt = read.lastDeliveredAt
            view.lastDeliveredMessageID = read.lastDeliveredMessageID
        }
        return view
    }

    func firstUnread(in channel: Channel, for userID: String, from position: Int) -> String? {
        var index = position
        let author = channel.messages.authorRef(of: userID)
        while index < channel.messages.count {
            if channel.messages.countsAsUnread(at: index, forAuthor: author) { return channel.messages.id(at: index) }
            index += 1
        }
        return nil
    }

    /// Per-message receipts for `viewer` (who must be a member). The author is never listed; others
    /// are listed only where rules 6-8 allow the viewer to see them.
    public func receipts(of messageID: String, in cid: ChannelCID, viewer: String) throws(ReceiptsError) -> MessageReceipts {
        let channel = try channel(cid)
        _ = try member(viewer, of: channel)
        guard let index = channel.messages.position(of: messageID) else { throw .unknownMessage(messageID) }
        let author = channel.messages.userID(at: index)
        let isChannelMessage = channel.messages.isChannelMessage(at: index)
        let type = type(of: channel)
        var readBy: [MessageReceipts.Entry] = []
        var deliveredTo: [MessageReceipts.Entry] = []
        for memberID in channel.memberOrder where memberID != author {
            guard let member = channel.members[memberID], let user = users[memberID] else { continue }
            let own = memberID == viewer
            let read = member.read
            if read.readPosition > index, own || (type.readEvents && user.privacy.readReceipts),
               let at = read.readPasses.firstPass(over: index) {
                readBy.append(.init(user: user, at: at))
            } else if isChannelMessage, read.deliveredPosition > index,
                      own || (type.deliveryEvents && user.privacy.deliveryReceipts),
                      let at = read.deliveredPasses.firstPass(over: index) {
                deliveredTo.append(.init(user: user, at: at))
            }
        }
        let byTime: (MessageReceipts.Entry, MessageReceipts.Entry) -> Bool = {
            $0.at != $1.at ? $0.at < $1.at : $0.user.id < $1.user.id
        }
        return MessageReceipts(messageID: messageID, readBy: readBy.sorted(by: byTime), deliveredTo: deliveredTo.sorted(by: byTime))
    }

    /// The user's unread state per channel, channels in cid order.
    public func unreadChannels(of userID: String) throws(ReceiptsError) -> [ChannelUnread] {
        _ = try user(userID)
        return (membership[userID] ?? []).sorted().compactMap { cid in
            if let member = dormantChannels[cid]?.member(userID) {
                return ChannelUnread(cid: cid, unreadMessages: member.unreadMessages, lastRead: member.lastRead)
            }
            guard let read = channels[cid]?.members[userID]?.read else { return nil }
            return ChannelUnread(cid: cid, unreadMessages: read.unreadMessages, lastRead: read.lastRead)
        }
    }
}

extension ReceiptsEngine {
    /// The threads `userID` participates in (``MessageThread``: the parent's author once someone
    /// replied, everyone who replied, members who marked the thread read) in the channels it is a
    /// member of, newest activity first (the last reply's time; then channel and parent id), those
    /// after `cursor`, at most `limit`. Each as its cursor, which names it.
    /// - Throws: `unknown_user`; `channelsNotLoaded` naming the user's dormant channels (the caller
    ///   loads them and asks again: a dormant channel's threads are not known without it).
    public func threads(of userID: String, after cursor: ThreadCursor?, limit: Int) throws(ReceiptsError) -> [ThreadCursor] {
        _ = try user(userID)
        let mine = membership[userID] ?? []
        let dormant = mine.filter { dormantChannels[$0] != nil }
        guard dormant.isEmpty else { throw .channelsNotLoaded(dormant.sorted()) }
        var found: [ThreadCursor] = []
        for cid in mine {
            guard let channel = channels[cid] else { continue }
            for thread in channel.threads.values where thread.reads[userID] != nil {
                guard let last = thread.replyPositions.last ?? channel.messages.position(of: thread.parentID) else { continue }
                let at = channel.messages.createdAt(at: last)
                if let cursor, !cursor.precedes(at, cid, thread.parentID) { continue }
                found.append(ThreadCursor(lastMessageAt: at, cid: cid, parentID: thread.parentID))
            }
        }
        found.sort { a, b in
            if a.lastMessageAt != b.lastMessageAt { return a.lastMessageAt > b.lastMessageAt }
            if a.cid != b.cid { return a.cid < b.cid }
            return a.parentID < b.parentID
        }
        return Array(found.prefix(max(0, limit)))
    }
}
