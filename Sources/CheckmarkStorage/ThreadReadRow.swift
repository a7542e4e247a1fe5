import CheckmarkCore

/// One stored row of a participant's thread read state: the pointer, its unread replies, and the
/// thread's count of countable replies (``MessageThread/countableReplies``) they are as of.
package struct ThreadReadRow: Sendable, Hashable {
    package var cid: ChannelCID
    package var parentID: String
    package var userID: String
    package var read: ThreadReadState
    package var repliesSeen: Int

    package init(cid: ChannelCID, parentID: String, userID: String, read: ThreadReadState, repliesSeen: Int) {
        self.cid = cid
        self.parentID = parentID
        self.userID = userID
        self.read = read
        self.repliesSeen = repliesSeen
    }

    /// Every thread read state of `channel`, in parent and user order (what a channel rewrite writes).
    package static func all(of channel: Channel) -> [ThreadReadRow] {
        channel.threads.keys.sorted().flatMap { parentID in
            let thread = channel.threads[parentID]!
            return thread.reads.keys.sorted().map { userID in
                ThreadReadRow(cid: channel.cid, parentID: parentID, userID: userID, read: thread.reads[userID]!, repliesSeen: thread.countableReplies)
            }
        }
    }
}
