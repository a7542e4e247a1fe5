import CheckmarkCore

/// A member as a channel state lists it: everything its `ChannelMemberResponse` is written from.
struct ListedMember: EncodedListEntry {
    var user: User
    var memberSince: Timestamp
    var online: Bool

    var key: String { user.id }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.online == rhs.online && lhs.memberSince == rhs.memberSince && SameEncoding.user(lhs.user, rhs.user)
    }

    func encode(into writer: inout JSONWriter) {
        ResultJSON.writeMember(user: user, memberSince: memberSince, online: online, into: &writer)
    }
}
