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
        // One look-up, then the read state changed where it is stored: no copy of the member.
        guard let slot = members.index(forKey: userID) else { return nil }
        // Read through the in-place accessor: the getter copied the whole member.
        let current = Self.readPosition(of: &members.values[slot])
        guard position > current else { return nil }
        let newest = newestChannelMessage(before: position)
        // last_read falls between the last read message and the first unread one, so that
        // "last_read >= created_at" tells exactly which messages are read.
        let lastRead = position == messages.count
            ? max(now, messages.createdAt(at: position - 1))
            : messages.createdAt(at: position - 1)
        // The unread count (rule 4's count from the pointer) is counted over the shorter stretch: none
        // when the pointer reaches the end, what stays unread after it when that is shorter than what
        // it passed, else what it passed, taken off the count. A member far behind who reads
        // everything does not pay for the history it skipped.
        let remaining: Int? = position == messages.count ? 0
            : messages.count - position <= position - current ? countUnread(for: userID, from: position) : nil
        let passedUnread = remaining == nil ? countUnread(for: userID, in: current..<position) : 0
        func advance(_ read: inout ReadState) -> UnreadChange {
            let old = read.unreadMessages
            read.readPosition = position
            read.lastReadMessageID = newest?.id
            read.lastRead = lastRead
            read.markedUnreadMessageID = nil
            read.unreadMessages = remaining ?? old - passedUnread
            read.readPasses.record(position: position, at: now)
            Self.raiseDelivered(&read, to: position, newest: newest)
            return UnreadChange(old: old, new: read.unreadMessages)
        }
        return advance(&members.values[slot].read)
    }

    // Read through the in-place accessor, as in `advanceRead`: the getter copied the whole member.
    private static func readPosition(of member: inout Member) -> Int { member.read.readPosition }
    private static func deliveredPosition(of member: inout Member) -> Int { member.read.deliveredPosition }

    /// Rule 2: a read pointer passing a message raises the delivered pointer with it (no event). The
    /// delivery it records is dated by the newest channel message passed, never by the read: what
    /// others may see of delivery (`last_delivered_at`, per-message receipts) must not reveal when a
    /// member whose read receipts are off read.
    mutating func raiseDelivered(of userID: String, to position: Int) {
        guard let slot = members.index(forKey: userID), position > Self.deliveredPosition(of: &members.values[slot]) else { return }
        let newest = newestChannelMessage(before: position)
        Self.raiseDelivered(&members.values[slot].read, to: position, newest: newest)
    }

    /// The id and time of the last channel message before `position`, if any.
    private func newestChannelMessage(before position: Int) -> (id: String, createdAt: Timestamp)? {
        channelMessage(before: position).map { (messages.id(at: $0), messages.createdAt(at: $0)) }
    }

    /// ``raiseDelivered(of:to:)`` on a read state, `newest` the last channel message before `position`.
    private static func raiseDelivered(_ read: inout ReadState, to position: Int, newest: (id: String, createdAt: Timestamp)?) {
        guard position > read.deliveredPosition else { return }
        read.deliveredPosition = position
        guard let (id, sent) = newest else { return }
        read.lastDeliveredMessageID = id
        read.lastDeliveredAt = max(read.lastDeliveredAt ?? sent, sent)
        // Passes are strictly increasing in time: after an earlier confirmation, one microsecond later.
        let after = read.deliveredPasses.last.map { $0.at.successor } ?? sent
        read.deliveredPasses.record(position: position, at: max(after, sent))
    }

    /// Sets the read pointer just before the message at `index` (mark unread). Moving it forward this
    /// way reads what lies before, so the delivered pointer follows.
    mutating func markUnread(of userID: String, from index: Int, at now: Timestamp) -> UnreadChange {
        let previous = channelMessage(before: index)
        let lastReadMessageID = previous.map { messages.id(at: $0) }
        let lastRead = index > 0 ? messages.createdAt(at: index - 1) : messages.createdAt(at: index).predecessor
        let unread = countUnread(for: userID, from: index)
        let old = members[userID]!.read.unreadMessages
        let movesForward = index > members[userID]!.read.readPosition
        members[userID]!.read.readPosition = index
        members[userID]!.read.lastReadMessageID = lastReadMessageID
        members[userID]!.read.lastRead = lastRead
        members[userID]!.read.markedUnreadMessageID = messages.id(at: index)
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
        let (id, createdAt) = (messages.id(at: index), messages.createdAt(at: index))
        // Like last_read: the confirmation time when nothing newer exists, else the message's own time,
        // so that "last_delivered_at >= created_at" tells exactly which messages are delivered.
        let at = position == messages.count ? max(now, createdAt) : createdAt
        members[userID]!.read.deliveredPosition = position
        members[userID]!.read.lastDeliveredMessageID = id
        members[userID]!.read.lastDeliveredAt = at
        members[userID]!.read.deliveredPasses.record(position: position, at: now)
        return at
    }

    /// Appends a message; every member it counts for (rule 4) gets one more unread.
    mutating func append(_ message: Message) {
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
