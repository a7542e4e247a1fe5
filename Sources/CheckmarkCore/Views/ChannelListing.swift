/// A channel as channel queries filter and sort it, whether in memory or dormant (``DormantChannel``):
/// what it says without its messages.
public enum ChannelListing: Sendable {
    case resident(Channel)
    case dormant(DormantChannel)

    public var cid: ChannelCID {
        switch self {
        case .resident(let channel): channel.cid
        case .dormant(let channel): channel.cid
        }
    }

    public var createdAt: Timestamp {
        switch self {
        case .resident(let channel): channel.createdAt
        case .dormant(let channel): channel.createdAt
        }
    }

    /// The newest message's time, if any.
    public var lastMessageAt: Timestamp? {
        switch self {
        case .resident(let channel): channel.lastMessageAt
        case .dormant(let channel): channel.lastMessageAt
        }
    }

    public var memberCount: Int {
        switch self {
        case .resident(let channel): channel.members.count
        case .dormant(let channel): channel.members.count
        }
    }

    public func hasMember(_ userID: String) -> Bool {
        switch self {
        case .resident(let channel): channel.members[userID] != nil
        case .dormant(let channel): channel.member(userID) != nil
        }
    }
}
