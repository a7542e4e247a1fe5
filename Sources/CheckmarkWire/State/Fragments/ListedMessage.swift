import CheckmarkCore

/// A message as a channel state lists it: the message, its author's profile, its thread's reply
/// count, and its reactions with their users as they are now and the viewer's own.
struct ListedMessage: EncodedListEntry {
    /// With the users of its newest reactions and the viewer's (``Message/reactionUsers``).
    var message: Message
    var sender: User?
    var replyCount: Int
    /// Whose reactions are `own_reactions` (nil: nobody's, a third party's view).
    var viewer: String?

    /// The message at `position` of `channel`, with its author as the engine knows them; an archived
    /// text from `archived`.
    /// - Throws: ``ArchivedTexts/Missing`` when the text is archived and not in `archived`.
    init(at position: Int, of channel: Channel, engine: ReceiptsEngine, archived: ArchivedTexts, viewer: String?) throws(ArchivedTexts.Missing) {
        guard var message = archived.message(at: position, of: channel.messages) else {
            throw ArchivedTexts.Missing(cid: channel.cid, positions: [position])
        }
        let viewer = viewer.flatMap { $0.isEmpty ? nil : $0 }
        if !message.reactions.isEmpty {
            message = engine.handedOut(message)
            if let viewer, message.reactions.contains(where: { $0.userID == viewer }) {
                message.reactionUsers[viewer] = engine.users[viewer] ?? User(id: viewer)
            }
        }
        self.message = message
        sender = engine.users[message.userID]
        replyCount = channel.threads[message.id]?.replyPositions.count ?? 0
        // Only whose own reactions show matters to the bytes: none on the message, none shown.
        self.viewer = message.reactions.contains { $0.userID == viewer } ? viewer : nil
    }

    var key: String { message.id }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.replyCount == rhs.replyCount && SameEncoding.text(lhs.viewer, rhs.viewer) && SameEncoding.message(lhs.message, rhs.message)
            && SameEncoding.user(lhs.sender, rhs.sender)
    }

    func encode(into writer: inout JSONWriter) {
        StreamJSON.write(message: message, sender: sender, replyCount: replyCount, viewer: viewer, into: &writer)
    }
}
