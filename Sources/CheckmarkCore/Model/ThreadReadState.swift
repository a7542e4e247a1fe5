/// A participant's read pointer in one thread: replies `0..<readCount` (in reply order) are read.
public struct ThreadReadState: Sendable, Hashable {
    /// How many of the thread's replies are read.
    public var readCount: Int
    /// Falls between the last read reply and the first unread one, like a channel's `last_read`.
    public var lastRead: Timestamp
    /// The newest read reply, if any.
    public var lastReadMessageID: String?
    /// Replies after the pointer that count for this participant: from others and not silent.
    public var unreadReplies: Int

    public init(readCount: Int, lastRead: Timestamp, lastReadMessageID: String?, unreadReplies: Int = 0) {
        self.readCount = readCount
        self.lastRead = lastRead
        self.lastReadMessageID = lastReadMessageID
        self.unreadReplies = unreadReplies
    }
}
