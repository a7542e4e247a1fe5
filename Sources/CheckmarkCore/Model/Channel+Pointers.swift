/// The pointer rules (contract rules 1-5) applied to one member, in place.
///
/// These mutate the channel through a single access (`engine.channels[cid]!.advanceRead(...)`), so a
/// confirmation never copies the member table.
extension Channel {
    /// A member's unread count before and after a change.
    public struct UnreadChange: Sendable, Hashable {
        public var old: Int
        public var new: Int
    }

    /// Moves the read pointer forward to `position` (rules 1-4), raising the delivered pointer with it
    /// (rule 2). Returns nil when it is already there or past.
    mutating func advanceRead(of userID: String, to position: Int, at now: Timestamp) -> UnreadChange? {
        guard let current = members[userID]?.read.readPosition, position > current else { return nil }
        let lastIndex = channelMessage(before: position)
        let lastReadMessageID = lastIndex.map { messages[$0].id }
        // last_read falls between the last read message and the first unread one, so that
        // "last_read >= created_at" tells exactly which messages are read.
        let lastRead = position == messages.count
            ? max(now, messages[position - 1].createdAt)
            : messages[position - 1].createdAt
        let old = members[userID]!.read.unreadMessages
        // The unread count drops by what the pointer passed: O(messages passed), not O(channel).
        let unread = old - countUnread(for: userID, in: current..<position)
        members[userID]!.read.readPosition = position
        members[userID]!.read.lastReadMessageID = lastReadMessageID
        members[userID]!.read.lastRead = lastRead
        members[userID]!.read.markedUnreadMessageID = nil
        members[userID]!.read.unreadMessages = unread
        members[userID]!.read.readPasses.record(position: position, at: now)
        raiseDelivered(of: userID, to: position)
        return UnreadChange(old: old, new: unread)
    }

    /// Rule 2: a read pointer passing a message raises the delivered pointer with it (no event). The
    /// delivery it records is dated by the newest channel message passed, never by the read: what
    /// others may see of delivery (`last_delivered_at`, per-message receipts) must not reveal when a
    /// member whose read receipts are off read.
    mutating func raiseDelivered(of userID: String, to position: Int) {
        guard position > members[userID]!.read.deliveredPosition else { return }
        members[userID]!.read.deliveredPosition = position
        guard let index = channelMessage(before: position) else { return }
        let sent = messages[index].createdAt
        members[userID]!.read.lastDeliveredMessageID = messages[index].id
        members[userID]!.read.lastDeliveredAt = max(members[userID]!.read.lastDeliveredAt ?? sent, sent)
        // Passes are strictly increasing in time: after an earlier confirmation, one microsecond later.
        let after = members[userID]!.read.deliveredPasses.last.map { $0.at.successor } ?? sent
        members[userID]!.read.deliveredPasses.record(position: position, at: max(after, sent))
    }

    /// Sets the read pointer just before the message at `index` (mark unread). Moving it forward this
    /// way reads what lies before, so the delivered pointer follows.
    mutating func markUnread(of userID: String, from index: Int, at now: Timestamp) -> UnreadChange {
        let previous = channelMessage(before: index)
        let lastReadMessageID = previous.map { messages[$0].id }
        let lastRead = index > 0 ? messages[index - 1].createdAt : messages[index].createdAt.predecessor
        let unread = countUnread(for: userID, from: index)
        let old = members[userID]!.read.unreadMessages
        let movesForward = index > members[userID]!.read.readPosition
        members[userID]!.read.readPosition = index
        members[userID]!.read.lastReadMessageID = lastReadMessageID
        members[userID]!.read.lastRead = lastRead
        members[userID]!.read.markedUnreadMessageID = messages[index].id
        members[userID]!.read.unreadMessages = unread
        if movesForward {
            members[userID]!.read.readPasses.record(position: index, at: now)
            raiseDelivered(of: userID, to: index)
        }
        return UnreadChange(old: old, new: unread)
    }

    /// Moves the delivered pointer past the message at `index`; returns the new `last_delivered_at`,
    /// or nil when it was already there.
    mutating func advanceDelivered(of userID: String, past index: Int, at now: Timestamp) -> Timestamp? {
        let position = index + 1
        guard position > members[userID]!.read.deliveredPosition else { return nil }
        let message = messages[index]
        // Like last_read: the confirmation time when nothing newer exists, else the message's own time,
        // so that "last_delivered_at >= created_at" tells exactly which messages are delivered.
        let at = position == messages.count ? max(now, message.createdAt) : message.createdAt
        members[userID]!.read.deliveredPosition = position
        members[userID]!.read.lastDeliveredMessageID = message.id
        members[userID]!.read.lastDeliveredAt = at
        members[userID]!.read.deliveredPasses.record(position: position, at: now)
        return at
    }

    /// Appends a message; every member it counts for (rule 4) gets one more unread.
    mutating func append(_ message: Message) {
        messageIndex[message.id] = messages.count
        if message.isChannelMessage { channelMessagePositions.append(messages.count) }
        messages.append(message)
        // Walked in place as stored (the order does not matter): no look-up per member, and no member
        // moved out of the table and back, which for a value this size is a copy each way.
        var index = members.startIndex
        while index != members.endIndex {
            if message.countsAsUnread(for: members.keys[index]) { members.values[index].read.unreadMessages += 1 }
            members.formIndex(after: &index)
        }
    }
}
