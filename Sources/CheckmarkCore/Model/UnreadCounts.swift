/// A user's unread totals across all their channels, as events carry them.
public struct UnreadCounts: Sendable, Hashable {
    /// Unread messages over all channels (`unread_count` and `total_unread_count`).
    public var totalUnread: Int
    /// Channels with at least one unread message (`unread_channels`).
    public var unreadChannels: Int
    /// Threads with at least one unread reply (`unread_threads`).
    public var unreadThreads: Int

    /// Follows one channel's unread count going from `old` to `new`: the total moves by the
    /// difference, and the channel counts as unread exactly while its count is above zero.
    mutating func adjust(unreadFrom old: Int, to new: Int) {
        totalUnread += new - old
        if old == 0 && new > 0 { unreadChannels += 1 }
        if old > 0 && new == 0 { unreadChannels -= 1 }
    }

    public init(totalUnread: Int = 0, unreadChannels: Int = 0, unreadThreads: Int = 0) {
        self.totalUnread = totalUnread
        self.unreadChannels = unreadChannels
        self.unreadThreads = unreadThreads
    }
}
