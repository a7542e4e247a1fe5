/// The thread rules applied to one channel, in place: replies join their parent's thread, and each
/// participant's thread pointer moves like a channel read pointer (never backwards, own replies read).
extension Channel {
    /// One participant's unread replies before and after a change of a thread.
    public struct ThreadChange: Sendable, Hashable {
        public var userID: String
        public var old: Int
        public var new: Int
    }

    /// Files the reply at `position` under its parent's thread (creating the thread with the parent's
    /// author as first participant, if a member). Every other participant it counts for gets one
    /// more unread reply; the author joins (or stays) with everything up to the reply read.
    /// Returns the participants whose unread replies changed.
    mutating func recordReply(at position: Int) -> [ThreadChange] {
        guard let parentID = messages.parentID(at: position), let parentIndex = messages.position(of: parentID) else { return [] }
        let replyAuthor = messages.userID(at: position)
        var changes: [ThreadChange] = []
        if threads[parentID] == nil {
            var thread = MessageThread(parentID: parentID)
            let parentAuthor = messages.userID(at: parentIndex)
            if members[parentAuthor] != nil {
                thread.reads[parentAuthor] = ThreadReadState(readCount: 0, lastRead: messages.createdAt(at: parentIndex), lastReadMessageID: nil)
            }
            threads[parentID] = thread
        }
        threads[parentID]!.replyPositions.append(position)
        if !messages.isSilent(at: position) { threads[parentID]!.countableReplies += 1 }
        let count = threads[parentID]!.replyPositions.count
        for (userID, read) in threads[parentID]!.reads where userID != replyAuthor && messages.countsAsUnreadReply(at: position, for: userID) {
            threads[parentID]!.reads[userID]!.unreadReplies = read.unreadReplies + 1
            changes.append(ThreadChange(userID: userID, old: read.unreadReplies, new: read.unreadReplies + 1))
        }
        if members[replyAuthor] != nil {
            let old = threads[parentID]!.reads[replyAuthor]?.unreadReplies ?? 0
            threads[parentID]!.reads[replyAuthor] = ThreadReadState(
                readCount: count, lastRead: messages.createdAt(at: position), lastReadMessageID: messages.id(at: position))
            if old != 0 { changes.append(ThreadChange(userID: replyAuthor, old: old, new: 0)) }
        }
        return changes
    }

    /// Moves `userID`'s pointer in the thread of `parentID` past its newest reply (a member who did not
    /// participate joins). Returns nil when nothing changed: already a participant with every reply read.
    mutating func readThread(_ parentID: String, by userID: String, at now: Timestamp) -> ThreadChange? {
        var thread = threads[parentID] ?? MessageThread(parentID: parentID)
        let count = thread.replyPositions.count
        let existing = thread.reads[userID]
        if let existing, existing.readCount >= count { return nil }
        let last = thread.replyPositions.last
        let lastRead = max(now, last.map { messages.createdAt(at: $0) } ?? now)
        thread.reads[userID] = ThreadReadState(readCount: count, lastRead: lastRead,
                                               lastReadMessageID: last.map { messages.id(at: $0) } ?? existing?.lastReadMessageID)
        threads[parentID] = thread
        return ThreadChange(userID: userID, old: existing?.unreadReplies ?? 0, new: 0)
    }

    /// Removes `userID` from every thread of the channel (a member removed); returns the unread replies
    /// it had in each thread where that was more than zero.
    mutating func leaveThreads(_ userID: String) -> [Int] {
        var dropped: [Int] = []
        for parentID in threads.keys {
            if let read = threads[parentID]!.reads.removeValue(forKey: userID), read.unreadReplies > 0 {
                dropped.append(read.unreadReplies)
            }
        }
        return dropped
    }

    /// Rebuilds the derived lists (channel message positions, reply positions and counts) from
    /// ``messages``. The participants' unread replies stay as given.
    mutating func rebuildDerivedLists() {
        channelMessagePositions = []
        // Every message, for a channel without thread-only replies (the usual one): one allocation.
        channelMessagePositions.reserveCapacity(messages.count)
        for parentID in threads.keys {
            threads[parentID]!.replyPositions = []
            threads[parentID]!.countableReplies = 0
        }
        for position in messages.indices {
            if messages.isChannelMessage(at: position) { channelMessagePositions.append(position) }
            if let parentID = messages.parentID(at: position) {
                if threads[parentID] == nil { threads[parentID] = MessageThread(parentID: parentID) }
                threads[parentID]!.replyPositions.append(position)
                if !messages.isSilent(at: position) { threads[parentID]!.countableReplies += 1 }
            }
        }
    }
}
