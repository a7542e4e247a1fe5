/// A channel the engine knows but does not hold in memory: its messages, pointer passes and threads
/// stay in storage until a command or a query needs the channel whole, which storage then loads and
/// ``ReceiptsEngine/install(_:)`` takes in. What stays resident is what lists and counts the channel
/// without it: its own fields, its members in join order, and each member's pointer and counts (what
/// the user's totals hold of this channel, and whether marking everything read would move anything).
public struct DormantChannel: Sendable, Hashable {
    public var cid: ChannelCID
    public var createdBy: String?
    public var createdAt: Timestamp
    /// The newest message's time, if it has messages.
    public var lastMessageAt: Timestamp?
    public var messageCount: Int
    /// Members in join order (``Channel/memberOrder``).
    public var members: [Member]

    /// What a dormant channel keeps of one member.
    public struct Member: Sendable, Hashable {
        public var userID: String
        public var readPosition: Int
        /// ``ReadState/lastRead``.
        public var lastRead: Timestamp
        /// Messages after the read pointer that count for this member (rule 4).
        public var unreadMessages: Int
        /// Threads of this channel in which the member has unread replies.
        public var unreadThreads: Int

        public init(userID: String, readPosition: Int, lastRead: Timestamp, unreadMessages: Int, unreadThreads: Int) {
            self.userID = userID
            self.readPosition = readPosition
            self.lastRead = lastRead
            self.unreadMessages = unreadMessages
            self.unreadThreads = unreadThreads
        }
    }

    public init(cid: ChannelCID, createdBy: String?, createdAt: Timestamp, lastMessageAt: Timestamp?, messageCount: Int, members: [Member]) {
        self.cid = cid
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.lastMessageAt = lastMessageAt
        self.messageCount = messageCount
        self.members = members
    }

    /// What `channel` leaves resident when it goes dormant.
    public init(of channel: Channel) {
        var unreadThreads: [String: Int] = [:]
        for thread in channel.threads.values {
            for (userID, read) in thread.reads where read.unreadReplies > 0 { unreadThreads[userID, default: 0] += 1 }
        }
        self.init(
            cid: channel.cid, createdBy: channel.createdBy, createdAt: channel.createdAt, lastMessageAt: channel.lastMessageAt,
            messageCount: channel.messages.count,
            members: channel.memberOrder.map { userID in
                let read = channel.members[userID]!.read
                return Member(userID: userID, readPosition: read.readPosition, lastRead: read.lastRead, unreadMessages: read.unreadMessages,
                              unreadThreads: unreadThreads[userID] ?? 0)
            })
    }

    /// The member `userID`, if one.
    public func member(_ userID: String) -> Member? {
        members.first { $0.userID == userID }
    }
}
