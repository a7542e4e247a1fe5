/// What Stream's channel object (`ChannelResponse`) says of a channel: ids, creator, times, member
/// count and the type's config. Events carry it (`notification.message_new`) and responses write it,
/// both through `StreamJSON.write(channel:into:)` (in the wire module).
public struct ChannelSummary: Sendable, Hashable {
    public var cid: ChannelCID
    public var createdBy: String?
    /// The creator's profile, when the creator is a known user.
    public var creator: User?
    public var createdAt: Timestamp
    public var lastMessageAt: Timestamp?
    public var memberCount: Int
    /// The channel's type: its config (`read_events`, `delivery_events`) as clients read it.
    public var type: ChannelType

    public init(cid: ChannelCID, createdBy: String?, creator: User? = nil, createdAt: Timestamp, lastMessageAt: Timestamp? = nil,
                memberCount: Int, type: ChannelType) {
        self.cid = cid
        self.createdBy = createdBy
        self.creator = creator
        self.createdAt = createdAt
        self.lastMessageAt = lastMessageAt
        self.memberCount = memberCount
        self.type = type
    }
}
