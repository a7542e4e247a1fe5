import CheckmarkCore

/// A member as a channel state lists it: everything its `ChannelMemberResponse` is written from.
struct ListedMember: EncodedListEntry {
    var user: User
    var memberSince: Timestamp
    var online: Bool

    var key: String { user.id }

    func encode(into writer: inout JSONWriter) {
        ResultJSON.writeMember(user: user, memberSince: memberSince, online: online, into: &writer)
    }
}
