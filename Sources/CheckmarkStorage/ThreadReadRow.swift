import CheckmarkCore

/// One stored row of a participant's thread read state: the pointer and what it says (the unread
/// replies are derived from it on load).
package struct ThreadReadRow: Sendable, Hashable {
    package var cid: ChannelCID
    package var parentID: String
    package var userID: String
    package var read: ThreadReadState

    package init(cid: ChannelCID, parentID: String, userID: String, read: ThreadReadState) {
        self.cid = cid
        self.parentID = parentID
        self.userID = userID
        self.read = read
    }

    /// Every thread read state of `channel`, in parent and user order (what a channel rewrite writes).
    package static func all(of channel: Channel) -> [ThreadReadRow] {
        channel.threads.keys.sorted().flatMap { parentID in
            channel.threads[parentID]!.reads.keys.sorted().map { userID in
                ThreadReadRow(cid: channel.cid, parentID: parentID, userID: userID, read: channel.threads[parentID]!.reads[userID]!)
            }
        }
    }

    /// Files the row's state under its channel's thread (for loading).
    package func restore(into channel: inout Channel) {
        channel.threads[parentID, default: MessageThread(parentID: parentID)].reads[userID] = read
    }
}
