extension ReceiptsEngine {
    /// Longest reaction type, in bytes.
    public static let maxReactionTypeBytes = 255
    public static let defaultMaxReactionsPerUser = 25

    /// Rules R1-R3: `userID`'s reaction of `type` to the message. A type the user has already given
    /// is sent again with the new score (`reaction.new`, as Stream's SDKs count it); with
    /// `enforceUnique` the user's reactions of other types go and the new one takes their place
    /// (`reaction.updated` when one went).
    /// - Throws: `unknownUser`, `unknownMessage`, `notAMember`, `invalidArgument` (a type empty, over
    ///   ``maxReactionTypeBytes`` or not printable; a score under 1; a deleted message; more than
    ///   ``maxReactionsPerUser`` types from one user on one message).
    mutating func sendReaction(_ cid: ChannelCID, _ messageID: String, userID: String, type: String, score: Int, enforceUnique: Bool,
                               at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        let (channel, position) = try reactableMessage(messageID, in: cid, by: userID)
        guard !type.isEmpty, type.utf8.count <= Self.maxReactionTypeBytes, !type.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw .invalidArgument("reaction type must be 1 to \(Self.maxReactionTypeBytes) printable bytes")
        }
        guard (1...Int(Int32.max)).contains(score) else { throw .invalidArgument("reaction score must be 1 to \(Int32.max)") }
        guard !channel.messages.isDeleted(at: position) else { throw .invalidArgument("message \(messageID) is deleted: no reactions") }
        _ = try heldMessage(at: position, of: channel)
        var reactions = channel.messages.reactions(at: position)
        let before = reactions.count
        if enforceUnique { reactions.removeAll { $0.userID == userID && $0.type != type } }
        let replaced = reactions.count < before
        let reaction: Reaction
        if let index = reactions.firstIndex(where: { $0.userID == userID && $0.type == type }) {
            reactions[index].score = score
            reactions[index].updatedAt = now
            reaction = reactions[index]
        } else {
            guard reactions.count(where: { $0.userID == userID }) < maxReactionsPerUser else {
                throw .invalidArgument("user \(userID) has \(maxReactionsPerUser) reaction types on message \(messageID), the limit")
            }
            reaction = Reaction(userID: userID, type: type, score: score, createdAt: now)
            reactions.append(reaction)
            // Kept in the order storage loads them back: by time, then user and type (two reactions
            // share a time when the clock was held back).
            if reactions.count > 1, reactions[reactions.count - 2].createdAt == now {
                reactions.sort { ($0.createdAt, $0.userID, $0.type) < ($1.createdAt, $1.userID, $1.type) }
            }
        }
        channels[cid]!.messages.setReactions(reactions, at: position)
        touched.messageReactions.insert(.init(cid: cid, position: position))
        return reactionOutcome(replaced ? .updated : .new, reaction, cid, position, at: now)
    }

    /// Rule R4: takes back `userID`'s reaction of `type` (`reaction.deleted`).
    /// - Throws: `unknownUser`, `unknownMessage`, `notAMember`, `unknownReaction` (the user has none of
    ///   that type there).
    mutating func deleteReaction(_ cid: ChannelCID, _ messageID: String, userID: String, type: String,
                                 at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        let (channel, position) = try reactableMessage(messageID, in: cid, by: userID)
        var reactions = channel.messages.reactions(at: position)
        guard let index = reactions.firstIndex(where: { $0.userID == userID && $0.type == type }) else {
            throw .unknownReaction(user: userID, type: type, messageID: messageID)
        }
        _ = try heldMessage(at: position, of: channel)
        let removed = reactions.remove(at: index)
        channels[cid]!.messages.setReactions(reactions, at: position)
        touched.messageReactions.insert(.init(cid: cid, position: position))
        return reactionOutcome(.deleted, removed, cid, position, at: now)
    }

    /// The channel and the position of a message `userID`, a member, may react to.
    private func reactableMessage(_ messageID: String, in cid: ChannelCID, by userID: String) throws(ReceiptsError) -> (Channel, Int) {
        _ = try user(userID)
        let channel = try channel(cid)
        _ = try member(userID, of: channel)
        guard let position = channel.messages.position(of: messageID) else { throw .unknownMessage(messageID) }
        return (channel, position)
    }

    /// The message at `position`, whose text the event needs.
    /// - Throws: `archivedText` when it is in storage only (the service reads it and applies again).
    private func heldMessage(at position: Int, of channel: Channel) throws(ReceiptsError) -> Message {
        guard let message = channel.messages.message(at: position) else { throw .archivedText(cid: channel.cid, position: position) }
        return message
    }

    /// `reaction.new`, `reaction.updated` or `reaction.deleted` to the channel's watchers, with the
    /// message as it is now.
    private func reactionOutcome(_ change: ReactionChange, _ reaction: Reaction, _ cid: ChannelCID, _ position: Int,
                                 at now: Timestamp) -> ReceiptsOutcome {
        let channel = channels[cid]!
        let message = handedOut(channel.messages.message(at: position)!)
        let user = users[reaction.userID] ?? User(id: reaction.userID)
        let replies = channel.threads[message.id]?.replyPositions.count ?? 0
        let event = ReceiptsEvent(
            payload: .reaction(change, message: message, sender: users[message.userID] ?? User(id: message.userID), reaction: reaction, user: user,
                               channel: summary(of: channel), replyCount: replies),
            cid: cid, createdAt: now, recipients: watcherRecipients(of: channel, withCounts: false))
        return ReceiptsOutcome(result: .reaction(message, reaction), events: [event])
    }

    /// `message` with the users of its newest reactions as they are now (``Message/reactionUsers``),
    /// for an event or an answer written without the engine at hand.
    public func handedOut(_ message: Message) -> Message {
        var message = message
        for reaction in message.reactions.suffix(Message.latestReactionsLimit) {
            message.reactionUsers[reaction.userID] = users[reaction.userID] ?? User(id: reaction.userID)
        }
        return message
    }
}

/// What a reaction event says happened (Stream's `reaction.new`, `reaction.updated`, `reaction.deleted`).
public enum ReactionChange: String, Sendable, Hashable {
    case new
    case updated
    case deleted
}
