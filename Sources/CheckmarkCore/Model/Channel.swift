/// A channel: its members with their read states, its messages in order, and the connections
/// watching it.
public struct Channel: Sendable {
    public var cid: ChannelCID
    public var createdBy: String?
    public var createdAt: Timestamp
    public var members: [String: Member] = [:]
    /// Member ids in the order they were added.
    public var memberOrder: [String] = []
    /// All messages, channel messages and thread replies, in `createdAt` order.
    public var messages: [Message] = []
    public var messageIndex: [String: Int] = [:]
    /// Connections watching, in the order they started.
    public var watchers: [String] = []
    public var watcherSet: Set<String> = []

    public init(cid: ChannelCID, createdBy: String?, createdAt: Timestamp) {
        self.cid = cid
        self.createdBy = createdBy
        self.createdAt = createdAt
    }

    /// The newest message's time, or the channel's creation time.
    public var lastMessageAt: Timestamp? { messages.last?.createdAt }

    /// Index of the last channel message (not thread-only) before `index`, if any.
    func channelMessage(before index: Int) -> Int? {
        var i = index - 1
        while i >= 0 {
            if messages[i].isChannelMessage { return i }
            i -= 1
        }
        return nil
    }

    /// Index of the last channel message (not thread-only), if any.
    var lastChannelMessageIndex: Int? { channelMessage(before: messages.count) }

    /// Messages after `position` that count as unread for `userID` (rule 4), recounted.
    public func countUnread(for userID: String, from position: Int) -> Int {
        var count = 0
        var index = position
        while index < messages.count {
            if messages[index].countsAsUnread(for: userID) { count += 1 }
            index += 1
        }
        return count
    }

    /// Positions of the channel's last `limit` channel messages (mark unread reaches only these).
    func isAmongLast(_ limit: Int, index: Int) -> Bool {
        var seen = 0
        var i = messages.count - 1
        while i >= index {
            if messages[i].isChannelMessage { seen += 1 }
            if seen > limit { return false }
            i -= 1
        }
        return true
    }
}
