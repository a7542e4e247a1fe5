import CheckmarkCore

/// A message as a channel state lists it: the message, its author's profile and its thread's reply
/// count.
struct ListedMessage: EncodedListEntry {
    var message: Message
    var sender: User?
    var replyCount: Int

    /// The message at `position` of `channel`, with its author as the engine knows them; an archived
    /// text from `archived`.
    /// - Throws: ``ArchivedTexts/Missing`` when the text is archived and not in `archived`.
    init(at position: Int, of channel: Channel, engine: ReceiptsEngine, archived: ArchivedTexts) throws(ArchivedTexts.Missing) {
        guard let message = archived.message(at: position, of: channel.messages) else {
            throw ArchivedTexts.Missing(cid: channel.cid, positions: [position])
        }
        self.message = message
        sender = engine.users[message.userID]
        replyCount = channel.threads[message.id]?.replyPositions.count ?? 0
    }

    var key: String { message.id }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.replyCount == rhs.replyCount && SameEncoding.message(lhs.message, rhs.message) && SameEncoding.user(lhs.sender, rhs.sender)
    }

    func encode(into writer: inout JSONWriter) {
        StreamJSON.write(message: message, sender: sender, replyCount: replyCount, into: &writer)
    }
}
