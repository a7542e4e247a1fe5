/// What a thread's `message.read` says of the thread (Stream's `thread` object): its parent, channel,
/// author, size and times.
public struct ThreadSummary: Sendable, Hashable {
    public var cid: ChannelCID
    public var parentID: String
    /// The parent message's author.
    public var createdBy: String
    /// The parent message's time.
    public var createdAt: Timestamp
    /// The newest reply's time, if any.
    public var lastMessageAt: Timestamp?
    public var replyCount: Int
    public var participantCount: Int { participants.count }
    /// The participants' ids, in order.
    public var participants: [String]
    /// The parent message's text.
    public var title: String

    public init(cid: ChannelCID, parentID: String, createdBy: String, createdAt: Timestamp, lastMessageAt: Timestamp?,
                replyCount: Int, participants: [String], title: String) {
        self.cid = cid
        self.parentID = parentID
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.lastMessageAt = lastMessageAt
        self.replyCount = replyCount
        self.participants = participants
        self.title = title
    }
}
