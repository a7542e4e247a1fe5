extension ReceiptsEngine {
    /// Marks channels read. With one target and `allChannels` false this is a channel mark read: the
    /// reader's connections get a `notification.mark_read` with the channel's fields and its `channel`
    /// object. Otherwise they get one without either (Stream's mark-all-read). Every target is
    /// validated before anything changes.
    mutating func markRead(_ targets: [ChannelReadTarget], user userID: String, allChannels: Bool, at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        let reader = try user(userID)
        // The channels are read in place (`&channels.values[slot]`), here and below: the dictionary's
        // getter copies a whole channel, a retain and release of each of its parts.
        var plans: [(cid: ChannelCID, slot: Dictionary<ChannelCID, Channel>.Index, position: Int)] = []
        for target in targets {
            guard let slot = channels.index(forKey: target.cid) else { throw .unknownChannel(target.cid) }
            plans.append((target.cid, slot, try Self.readPosition(of: target, for: userID, in: &channels.values[slot])))
        }
        var events: [ReceiptsEvent] = []
        var changed = false
        var lastReadMessageID: String?
        for plan in plans {
            guard let change = channels.values[plan.slot].advanceRead(of: userID, to: plan.position, at: now) else { continue }
            adjustTotals(of: userID, change)
            changed = true
            touched.members.insert(.init(cid: plan.cid, userID: userID))
            let read = Self.readReceipt(of: userID, in: &channels.values[plan.slot])
            lastReadMessageID = read.lastReadMessageID
            if type(of: plan.cid).readEvents {
                // Emitted even with no one watching: the journal keeps it for clients that resume.
                let recipients = Self.receiptRecipients(
                    among: read.watchers, subject: userID, shareable: reader.privacy.readReceipts, connections: connections)
                events.append(ReceiptsEvent(
                    payload: .messageRead(user: reader, lastReadMessageID: read.lastReadMessageID),
                    cid: plan.cid, createdAt: read.lastRead, recipients: recipients))
            }
        }
        guard changed else { return .unchanged }
        let own = ownRecipients(of: userID, withCounts: true)
        let single = !allChannels && plans.count == 1
        events.append(ReceiptsEvent(
            payload: .notificationMarkRead(
                user: reader, lastReadMessageID: single ? lastReadMessageID : nil,
                channel: single ? summary(ofChannelAt: plans[0].slot) : nil),
            cid: single ? plans[0].cid : nil, createdAt: now, recipients: own))
        return ReceiptsOutcome(events: events)
    }

    /// ``summary(of:)`` of the channel at `slot`, read in place: passing `channels.values[slot]` to
    /// it copied the channel and the engine, a retain and release of each of their parts, every read.
    private mutating func summary(ofChannelAt slot: Dictionary<ChannelCID, Channel>.Index) -> ChannelSummary {
        let type = type(of: channels.keys[slot])
        return Self.summary(of: &channels.values[slot], users: users, type: type)
    }

    /// What ``summary(of:)`` says of `channel` (`inout` only to be read in place; keep the two alike).
    private static func summary(of channel: inout Channel, users: UserTable, type: ChannelType) -> ChannelSummary {
        ChannelSummary(
            cid: channel.cid, createdBy: channel.createdBy, creator: channel.createdBy.flatMap { users[$0] },
            createdAt: channel.createdAt, lastMessageAt: channel.lastMessageAt, memberCount: channel.members.count, type: type)
    }

    /// Where a read target moves `userID`'s read pointer in `channel`: past its message, or to the end.
    /// Not a member: `notAMember`; an unknown message: `unknownMessage`; a thread reply:
    /// `invalidArgument`. (The channel is `inout` only to be read in place.)
    private static func readPosition(of target: ChannelReadTarget, for userID: String, in channel: inout Channel) throws(ReceiptsError) -> Int {
        guard channel.members.index(forKey: userID) != nil else { throw .notAMember(user: userID, cid: channel.cid) }
        guard let messageID = target.messageID else { return channel.messages.count }
        guard let index = channel.messages.position(of: messageID) else { throw .unknownMessage(messageID) }
        guard channel.messages.isChannelMessage(at: index) else {
            throw .invalidArgument("message \(messageID) is a thread reply; it does not move the channel's read state")
        }
        return index + 1
    }

    /// What a `message.read` needs of the channel once `userID` read it: their read state and the
    /// channel's watchers. (In place, as above.)
    private static func readReceipt(of userID: String, in channel: inout Channel)
        -> (lastReadMessageID: String?, lastRead: Timestamp, watchers: [Channel.Watcher]) {
        guard let slot = channel.members.index(forKey: userID) else { preconditionFailure("\(userID) read \(channel.cid) as a member") }
        let read = Self.readState(of: &channel.members.values[slot])
        return (read.lastReadMessageID, read.lastRead, channel.watchers)
    }

    private static func readState(of member: inout Member) -> (lastReadMessageID: String?, lastRead: Timestamp) {
        (member.read.lastReadMessageID, member.read.lastRead)
    }

    /// Reads a thread: only its participant state moves (the channel's counts do not). The thread's
    /// other participants watching the channel get `message.read` with the thread (rules 6 and 8 apply
    /// as to channel reads: nobody when the reader's read receipts are off) and the reader's
    /// connections `notification.mark_read` with `thread_id`, the thread and the channel. A `parentID`
    /// that is not a message of the channel starting a thread is `invalid_argument` naming `thread_id`.
    mutating func markThreadRead(_ cid: ChannelCID, _ userID: String, _ parentID: String, at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        let reader = try user(userID)
        let channel = try channel(cid)
        _ = try member(userID, of: channel)
        guard let index = channel.messages.position(of: parentID), !channel.messages.isReply(at: index) else {
            throw .invalidArgument("thread_id \(parentID) is not a message of \(cid) that starts a thread")
        }
        // The thread's title is its parent's text: read back from storage first when it is archived
        // (and only when the read changes something).
        if let thread = channel.threads[parentID], let read = thread.reads[userID], read.readCount >= thread.replyPositions.count {
            return .unchanged
        }
        guard channel.messages.holdsText(at: index) else { throw .archivedText(cid: cid, position: index) }
        guard let change = channels[cid]!.readThread(parentID, by: userID, at: now) else { return .unchanged }
        adjustThreadTotals(change)
        touched.threadReads.insert(.init(cid: cid, parentID: parentID, userID: userID))
        let updated = channels[cid]!
        let read = updated.threads[parentID]!.reads[userID]!
        var events: [ReceiptsEvent] = []
        let thread = summary(ofThread: parentID, in: updated)
        if type(of: updated).readEvents, let thread {
            // The thread's other participants watching the channel; never the reader's own connections
            // (Stream's SDKs take any message.read of their own user as a read of the whole channel).
            let others = Set(thread.participants).subtracting([userID])
            let recipients = reader.privacy.readReceipts ? watcherRecipients(of: updated, withCounts: false).filter { others.contains($0.userID) } : []
            events.append(ReceiptsEvent(
                payload: .messageRead(user: reader, lastReadMessageID: read.lastReadMessageID, thread: thread),
                cid: cid, createdAt: read.lastRead, recipients: recipients))
        }
        events.append(ReceiptsEvent(
            payload: .notificationMarkRead(
                user: reader, lastReadMessageID: read.lastReadMessageID, thread: thread, channel: summary(of: updated)),
            cid: cid, createdAt: now, recipients: ownRecipients(of: userID, withCounts: true)))
        return ReceiptsOutcome(events: events)
    }

    mutating func markReadMany(_ userID: String, _ targets: [ChannelReadTarget]?, at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        _ = try user(userID)
        // Mark all read: the user's channels in memory. Those where the pointer would move were
        // loaded first (``channelsToLoad(for:)``); a dormant one left is read to its end already.
        let list = targets ?? (membership[userID] ?? []).filter { channels[$0] != nil }.sorted().map { ChannelReadTarget(cid: $0, messageID: nil) }
        return try markRead(list, user: userID, allChannels: true, at: now)
    }

    mutating func markUnread(_ cid: ChannelCID, _ userID: String, _ target: UnreadTarget, at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        let reader = try user(userID)
        let (index, messageID) = try unreadStart(cid, userID, target)
        let old = channels[cid]!.members[userID]!.read
        if old.readPosition == index && old.markedUnreadMessageID == messageID { return .unchanged }

        let change = channels[cid]!.markUnread(of: userID, from: index, at: now)
        adjustTotals(of: userID, change)
        touched.members.insert(.init(cid: cid, userID: userID))
        let read = channels[cid]!.members[userID]!.read
        let unread = change.new

        let own = ownRecipients(of: userID, withCounts: true)
        let event = ReceiptsEvent(
            payload: .notificationMarkUnread(
                user: reader, firstUnreadMessageID: messageID, lastReadMessageID: read.lastReadMessageID,
                lastReadAt: read.lastRead, unreadMessages: unread),
            cid: cid, createdAt: now, recipients: own)
        return ReceiptsOutcome(events: [event])
    }

    /// The message a mark unread starts from, checked against the window of the channel's newest messages.
    private func unreadStart(_ cid: ChannelCID, _ userID: String, _ target: UnreadTarget) throws(ReceiptsError) -> (Int, String) {
        let channel = try channel(cid)
        _ = try member(userID, of: channel)
        let index: Int
        switch target {
        case .message(let id):
            guard let found = channel.messages.position(of: id) else { throw .unknownMessage(id) }
            guard channel.messages.isChannelMessage(at: found) else {
                throw .invalidArgument("message \(id) is a thread reply; mark unread takes a channel message")
            }
            index = found
        case .timestamp(let time):
            guard let found = channel.firstChannelMessage(createdAtOrAfter: time) else {
                throw .invalidArgument("no message at or after \(time.rfc3339)")
            }
            index = found
        }
        guard channel.isAmongLast(Self.markUnreadWindow, index: index) else { throw .messageTooOld(channel.messages.id(at: index)) }
        return (index, channel.messages.id(at: index))
    }
}
