/// A member's read state as one viewer may see it: fields hidden by privacy or channel-type flags
/// (rules 6-8) are nil.
public struct ReadStateView: Sendable, Hashable {
    public var user: User
    /// When the member joined: what a hidden read state shows as `last_read` (Stream requires the
    /// field), so that nothing appears read and nothing about the member's reading is revealed.
    public var memberSince: Timestamp
    public var lastRead: Timestamp?
    public var lastReadMessageID: String?
    public var unreadMessages: Int?
    public var firstUnreadMessageID: String?
    public var lastDeliveredAt: Timestamp?
    public var lastDeliveredMessageID: String?

    public init(user: User, memberSince: Timestamp = Timestamp(rawValue: 0), lastRead: Timestamp? = nil, lastReadMessageID: String? = nil, unreadMessages: Int? = nil,
                firstUnreadMessageID: String? = nil, lastDeliveredAt: Timestamp? = nil, lastDeliveredMessageID: String? = nil) {
        self.user = user
        self.memberSince = memberSince
        self.lastRead = lastRead
        self.lastReadMessageID = lastReadMessageID
        self.unreadMessages = unreadMessages
        self.firstUnreadMessageID = firstUnreadMessageID
        self.lastDeliveredAt = lastDeliveredAt
        self.lastDeliveredMessageID = lastDeliveredMessageID
    }

    /// Whether any read field is visible.
    public var showsRead: Bool { lastRead != nil }
}
