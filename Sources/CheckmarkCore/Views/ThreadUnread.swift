/// A participant's unread state in one thread, as `GET /unread` lists it.
public struct ThreadUnread: Sendable, Hashable {
    public var cid: ChannelCID
    public var parentID: String
    public var unreadReplies: Int
    public var lastRead: Timestamp
    public var lastReadMessageID: String?

    public init(cid: ChannelCID, parentID: String, unreadReplies: Int, lastRead: Timestamp, lastReadMessageID: String?) {
        self.cid = cid
        self.parentID = parentID
        self.unreadReplies = unreadReplies
        self.lastRead = lastRead
        self.lastReadMessageID = lastReadMessageID
    }
}
