import CheckmarkCore

/// A member as a channel state lists it: everything its `ChannelMemberResponse` is written from.
struct ListedMember: EncodedListEntry {
    var user: User
    var memberSince: Timestamp
    var online: Bool

    /// The members a channel state lists: at most ``ResultJSON/memberListLimit``, most recently
    /// added first.
    static func listed(in channel: Channel, engine: ReceiptsEngine) -> [ListedMember] {
        channel.memberOrder.reversed().prefix(ResultJSON.memberListLimit).compactMap { id in
            guard let member = channel.members[id], let user = engine.users[id] else { return nil }
            return ListedMember(user: user, memberSince: member.createdAt, online: engine.isOnline(id))
        }
    }

    var key: String { user.id }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.online == rhs.online && lhs.memberSince == rhs.memberSince && SameEncoding.user(lhs.user, rhs.user)
    }

    func encode(into writer: inout JSONWriter) {
        ResultJSON.writeMember(user: user, memberSince: memberSince, online: online, into: &writer)
    }
}
