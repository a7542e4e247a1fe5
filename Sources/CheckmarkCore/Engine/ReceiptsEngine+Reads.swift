extension ReceiptsEngine {
    /// Marks channels read. With one target and `allChannels` false this is a channel mark read: the
    /// reader's connections get a `notification.mark_read` with the channel's fields. Otherwise they get
    /// one without channel fields. Every target is validated before anything changes.
    mutating func markRead(_ targets: [ChannelReadTarget], user userID: String, allChannels: Bool, at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        let reader = try user(userID)
        var plans: [(cid: ChannelCID, position: Int)] = []
        for target in targets {
            let channel = try channel(target.cid)
            _ = try member(userID, of: channel)
            if let messageID = target.messageID {
                guard let index = channel.messageIndex[messageID] else { throw .unknownMessage(messageID) }
                guard channel.messages[index].isChannelMessage else {
                    throw .invalidArgument("message \(messageID) is a thread reply; it does not move the channel's read state")
                }
                plans.append((target.cid, index + 1))
            } else {
                plans.append((target.cid, channel.messages.count))
            }
        }
        var events: [ReceiptsEvent] = []
        var changed = false
        var lastReadMessageID: String?
        for plan in plans {
            guard advanceRead(of: userID, in: plan.cid, to: plan.position, at: now) else { continue }
            changed = true
            let channel = channels[plan.cid]!
            let read = channel.members[userID]!.read
            lastReadMessageID = read.lastReadMessageID
            if type(of: channel).readEvents {
                let recipients = receiptRecipients(of: channel, subject: userID, shareable: reader.privacy.readReceipts)
                if !recipients.isEmpty {
                    events.append(ReceiptsEvent(
                        payload: .messageRead(user: reader, lastReadMessageID: read.lastReadMessageID),
                        cid: plan.cid, createdAt: read.lastRead, recipients: recipients))
                }
            }
        }
        guard changed else { return .unchanged }
        let own = ownRecipients(of: userID, withCounts: true)
        if !own.isEmpty {
            let single = !allChannels && plans.count == 1
            events.append(ReceiptsEvent(
                payload: .notificationMarkRead(user: reader, lastReadMessageID: single ? lastReadMessageID : nil),
                cid: single ? plans[0].cid : nil, createdAt: now, recipients: own))
        }
        return ReceiptsOutcome(events: events)
    }

    mutating func markReadMany(_ userID: String, _ targets: [ChannelReadTarget]?, at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        _ = try user(userID)
        let list = targets ?? (membership[userID] ?? []).sorted().map { ChannelReadTarget(cid: $0, messageID: nil) }
        return try markRead(list, user: userID, allChannels: true, at: now)
    }

    /// Moves the read pointer forward to `position` (rules 1-4); false when it is already there or past.
    @discardableResult
    mutating func advanceRead(of userID: String, in cid: ChannelCID, to position: Int, at now: Timestamp) -> Bool {
        let channel = channels[cid]!
        var read = channel.members[userID]!.read
        guard position > read.readPosition else { return false }
        let lastIndex = channel.channelMessage(before: position)
        read.readPosition = position
        read.lastReadMessageID = lastIndex.map { channel.messages[$0].id }
        // last_read must fall between the last read message and the first unread one, so that
        // "last_read >= created_at" tells exactly which messages are read.
        read.lastRead = position == channel.messages.count
            ? max(now, channel.messages[position - 1].createdAt)
            : channel.messages[position - 1].createdAt
        read.markedUnreadMessageID = nil
        read.readPasses.record(position: position, at: now)
        raiseDelivered(&read, to: position, messageID: read.lastReadMessageID, at: read.lastRead, passedAt: now)
        channels[cid]!.members[userID]!.read = read
        setUnread(channel.countUnread(for: userID, from: position), for: userID, in: cid)
        return true
    }

    /// Rule 2: a read pointer passing a message raises the delivered pointer with it (no event).
    func raiseDelivered(_ read: inout ReadState, to position: Int, messageID: String?, at time: Timestamp, passedAt now: Timestamp) {
        guard position > read.deliveredPosition else { return }
        read.deliveredPosition = position
        read.lastDeliveredMessageID = messageID ?? read.lastDeliveredMessageID
        read.lastDeliveredAt = max(read.lastDeliveredAt ?? time, time)
        read.deliveredPasses.record(position: position, at: now)
    }

    mutating func markUnread(_ cid: ChannelCID, _ userID: String, _ target: UnreadTarget, at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        let reader = try user(userID)
        let channel = try channel(cid)
        let old = try member(userID, of: channel).read
        let index: Int
        switch target {
        case .message(let id):
            guard let found = channel.messageIndex[id] else { throw .unknownMessage(id) }
            guard channel.messages[found].isChannelMessage else {
                throw .invalidArgument("message \(id) is a thread reply; mark unread takes a channel message")
            }
            index = found
        case .timestamp(let time):
            guard let found = channel.messages.firstIndex(where: { $0.isChannelMessage && $0.createdAt >= time }) else {
                throw .invalidArgument("no message at or after \(time.rfc3339)")
            }
            index = found
        }
        let message = channel.messages[index]
        guard channel.isAmongLast(Self.markUnreadWindow, index: index) else { throw .messageTooOld(message.id) }
        if old.readPosition == index && old.markedUnreadMessageID == message.id { return .unchanged }

        var read = old
        let previous = channel.channelMessage(before: index)
        read.readPosition = index
        read.lastReadMessageID = previous.map { channel.messages[$0].id }
        read.lastRead = index > 0 ? channel.messages[index - 1].createdAt : message.createdAt.predecessor
        read.markedUnreadMessageID = message.id
        if index > old.readPosition {
            // Marking unread further on reads what lies before it.
            read.readPasses.record(position: index, at: now)
            raiseDelivered(&read, to: index, messageID: read.lastReadMessageID, at: read.lastRead, passedAt: now)
        }
        channels[cid]!.members[userID]!.read = read
        let unread = channel.countUnread(for: userID, from: index)
        setUnread(unread, for: userID, in: cid)

        let own = ownRecipients(of: userID, withCounts: true)
        var events: [ReceiptsEvent] = []
        if !own.isEmpty {
            events.append(ReceiptsEvent(
                payload: .notificationMarkUnread(
                    user: reader, firstUnreadMessageID: message.id, lastReadMessageID: read.lastReadMessageID,
                    lastReadAt: read.lastRead, unreadMessages: unread),
                cid: cid, createdAt: now, recipients: own))
        }
        return ReceiptsOutcome(events: events)
    }
}
