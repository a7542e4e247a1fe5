/// One channel's unread state for a user (`GET /unread`).
public struct ChannelUnread: Sendable, Hashable {
    public var cid: ChannelCID
    public var unreadMessages: Int
    public var lastRead: Timestamp

    public init(cid: ChannelCID, unreadMessages: Int, lastRead: Timestamp) {
        self.cid = cid
        self.unreadMessages = unreadMessages
        self.lastRead = lastRead
    }
}
