extension ReceiptsEngine {
    /// Rule M1-M3: gives the message `text`. `editor` nil is the server (any message); a user may edit
    /// only their own messages, in a channel they are a member of.
    /// - Throws: `unknownMessage`, `notAllowed` (not the author), `notAMember`, `invalidArgument` (the
    ///   text is too long, or the message is deleted).
    mutating func updateMessage(_ cid: ChannelCID, _ messageID: String, text: String, by editor: String?, at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        let (channel, position) = try editableMessage(messageID, in: cid, by: editor, verb: "edit")
        guard text.utf8.count <= Self.maxMessageTextBytes else {
            throw .invalidArgument("message text is longer than \(Self.maxMessageTextBytes) bytes")
        }
        guard !channel.messages.isDeleted(at: position) else { throw .invalidArgument("message \(messageID) is deleted and cannot be edited") }
        guard let current = channel.messages.text(at: position) else { throw .archivedText(cid: cid, position: position) }
        var revision = channel.messages.revision(at: position) ?? MessageRevision(updatedAt: now)
        revision.updatedAt = now
        let changesText = text != current
        if changesText { revision.textUpdatedAt = now }
        // An edited text is written with every change of the message's row: held until then.
        channels[cid]!.messages.revise(at: position, revision, text: revision.textUpdatedAt != nil ? text : nil)
        touched.messageEdits.insert(.init(cid: cid, position: position))
        return revisionOutcome(cid, position, by: editor, at: now, deletion: nil)
    }

    /// Rules M4-M6: deletes the message (`hard`: its text and reactions erased too). Unread counts,
    /// read and delivered pointers stay as they are. A message already deleted stays as it is (no
    /// event), unless a hard delete follows a soft one.
    /// - Throws: `unknownMessage`, `notAllowed` (not the author), `notAMember`.
    mutating func deleteMessage(_ cid: ChannelCID, _ messageID: String, hard: Bool, by editor: String?, at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        let (channel, position) = try editableMessage(messageID, in: cid, by: editor, verb: "delete")
        let before = channel.messages.revision(at: position)
        if let before, before.isDeleted, before.hardDeleted || !hard {
            return ReceiptsOutcome(result: .message(try currentMessage(at: position, of: channel)), events: [], changed: false)
        }
        // The event carries the text a soft delete keeps (read now: it may be archived).
        let current = hard ? "" : try currentMessage(at: position, of: channel).text
        var revision = before ?? MessageRevision(updatedAt: now)
        revision.updatedAt = now
        revision.deletedAt = revision.deletedAt ?? now
        revision.hardDeleted = hard
        channels[cid]!.messages.revise(at: position, revision, text: hard || revision.textUpdatedAt != nil ? current : nil)
        touched.messageEdits.insert(.init(cid: cid, position: position))
        if hard, !channel.messages.reactions(at: position).isEmpty {
            // A hard delete takes its reactions too.
            channels[cid]!.messages.setReactions([], at: position)
            touched.messageReactions.insert(.init(cid: cid, position: position))
        }
        return revisionOutcome(cid, position, by: editor, at: now, deletion: hard)
    }

    /// The channel and the position of a message `editor` may change.
    private func editableMessage(_ messageID: String, in cid: ChannelCID, by editor: String?, verb: String) throws(ReceiptsError) -> (Channel, Int) {
        let channel = try channel(cid)
        guard let position = channel.messages.position(of: messageID) else { throw .unknownMessage(messageID) }
        if let editor {
            _ = try user(editor)
            guard channel.messages.userID(at: position) == editor else {
                throw .notAllowed("user \(editor) may not \(verb) message \(messageID): only its author may")
            }
            _ = try member(editor, of: channel)
        }
        return (channel, position)
    }

    /// The message at `position` as it is now.
    /// - Throws: `archivedText` when its text is in storage only (the service reads it and applies again).
    private func currentMessage(at position: Int, of channel: Channel) throws(ReceiptsError) -> Message {
        guard let message = channel.messages.message(at: position) else { throw .archivedText(cid: channel.cid, position: position) }
        return message
    }

    /// `message.updated` (`deletion` nil) or `message.deleted` for the message at `position`, to the
    /// channel's watchers.
    private func revisionOutcome(_ cid: ChannelCID, _ position: Int, by editor: String?, at now: Timestamp, deletion hard: Bool?) -> ReceiptsOutcome {
        let channel = channels[cid]!
        let message = handedOut(channel.messages.message(at: position)!)
        let sender = users[message.userID] ?? User(id: message.userID)
        let actor = editor.flatMap { users[$0] } ?? sender
        let replies = channel.threads[message.id]?.replyPositions.count ?? 0
        let payload: ReceiptsEventPayload = if let hard {
            .messageDeleted(message: message, sender: sender, by: actor, hard: hard, replyCount: replies)
        } else {
            .messageUpdated(message: message, sender: sender, by: actor, replyCount: replies)
        }
        let event = ReceiptsEvent(payload: payload, cid: cid, createdAt: now, recipients: watcherRecipients(of: channel, withCounts: false))
        return ReceiptsOutcome(result: .message(message), events: [event])
    }
}
