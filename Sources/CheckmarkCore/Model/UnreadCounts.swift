/// A user's unread totals across all their channels, as events carry them.
public struct UnreadCounts: Sendable, Hashable {
    /// Unread messages over all channels (`unread_count` and `total_unread_count`).
    public var totalUnread: Int
    /// Channels with at least one unread message (`unread_channels`).
    public var unreadChannels: Int
    /// Threads with at least one unread reply (`unread_threads`).
    public var unreadThreads: Int

    public init(totalUnread: Int = 0, unreadChannels: Int = 0, unreadThreads: Int = 0) {
        self.totalUnread = totalUnread
        self.unreadChannels = unreadChannels
        self.unreadThreads = unreadThreads
    }
}
