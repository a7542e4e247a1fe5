import CheckmarkCore

/// A message as a channel state lists it: the message, its author's profile and its thread's reply
/// count.
struct ListedMessage: EncodedListEntry {
    var message: Message
    var sender: User?
    var replyCount: Int

    var key: String { message.id }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.replyCount == rhs.replyCount && SameEncoding.message(lhs.message, rhs.message) && SameEncoding.user(lhs.sender, rhs.sender)
    }

    func encode(into writer: inout JSONWriter) {
        StreamJSON.write(message: message, sender: sender, replyCount: replyCount, into: &writer)
    }
}
