extension ReceiptsEngine {
    /// Largest message text, in bytes.
    public static let maxMessageTextBytes = 5_000
    /// Longest message id, in bytes.
    public static let maxMessageIDBytes = 255

    mutating func sendMessage(_ cid: ChannelCID, _ userID: String, _ draft: MessageDraft, at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        let sender = try user(userID)
        let message = try validatedMessage(draft, in: cid, from: userID, at: now)
        channels[cid]!.append(message)
        touched.messages.insert(.init(cid: cid, position: channels[cid]!.messages.count - 1))
        if let parentID = message.parentID {
            let newThread = channels[cid]!.threads[parentID] == nil
            for change in channels[cid]!.recordReply(at: channels[cid]!.messages.count - 1) { adjustThreadTotals(change) }
            // The author's pointer moved; a new thread's participants (its parent's author, if a
            // member, and the reply's) are all new rows. Others' unread replies are derived, not stored.
            for participant in newThread ? Array(channels[cid]!.threads[parentID]!.reads.keys) : [userID] {
                touched.threadReads.insert(.init(cid: cid, parentID: parentID, userID: participant))
            }
        }
        let memberOrder = channels[cid]!.memberOrder
        do {
            // A read-only snapshot for the totals, released below; walked as it is stored (the totals
            // do not depend on the order), which costs no look-up per member, and reading only the
            // count and the slot of the member's totals, not copying each member.
            let members = channels[cid]!.members
            var index = members.startIndex
            while index != members.endIndex {
                if message.countsAsUnread(for: members.keys[index]) {
                    let unread = members.values[index].read.unreadMessages
                    adjustTotals(at: members.values[index].totalsSlot, from: unread - 1, to: unread)
                }
                members.formIndex(after: &index)
            }
        }
        if message.isChannelMessage {
            // Rule 3: sending reads up to the message.
            let position = channels[cid]!.messages.count
            if let change = channels[cid]!.advanceRead(of: userID, to: position, at: message.createdAt) {
                adjustTotals(of: userID, change)
                touched.members.insert(.init(cid: cid, userID: userID))
            }
        }

        let channel = channels[cid]!
        // The channel object of the notifications, made once for both when a reply is also shown in the channel.
        var summary: ChannelSummary?
        var events: [ReceiptsEvent] = []
        events.reserveCapacity(3)  // message.new, notification.message_new and a reply's notification in one allocation
        events.append(ReceiptsEvent(
            payload: .messageNew(message: message, sender: sender, watcherCount: channel.watchingUsers.count),
            cid: cid, createdAt: message.createdAt, recipients: watcherRecipients(of: channel, withCounts: true)))
        if message.isChannelMessage {
            var others: [Recipient] = []
            // When every member's connection is watching (a busy channel's usual state) nobody else is
            // told, and no member needs looking up.
            if channel.memberConnections > channel.watchers.count {
                for memberID in memberOrder {
                    for connection in connections(of: memberID) where !channel.watcherSet.contains(connection) {
                        others.append(Recipient(connection: connection, connectionID: connections.id(of: connection),
                                                userID: memberID, counts: counts(for: memberID)))
                    }
                }
            }
            // Emitted even when no connection receives it: which events a command produces (and so
            // the journal's sequences) depends on durable state only, never on who is connected.
            summary = self.summary(of: channel)
            events.append(ReceiptsEvent(
                payload: .notificationMessageNew(message: message, sender: sender, channel: summary!, watcherCount: channel.watchingUsers.count),
                cid: cid, createdAt: message.createdAt, recipients: others))
        }
        if let parentID = message.parentID, let thread = channel.threads[parentID] {
            // Every connection of the thread's other participants, watching or not, with their counts.
            var recipients: [Recipient] = []
            for participant in thread.reads.keys.sorted() where participant != userID {
                recipients += ownRecipients(of: participant, withCounts: true)
            }
            events.append(ReceiptsEvent(
                payload: .notificationThreadMessageNew(message: message, sender: sender, channel: summary ?? self.summary(of: channel),
                                                       watcherCount: channel.watchingUsers.count),
                cid: cid, createdAt: message.createdAt, recipients: recipients))
        }
        return ReceiptsOutcome(result: .message(message), events: events)
    }

    /// Checks a draft against the channel and gives it its id and time (strictly increasing within
    /// the channel). Changes nothing but the generated-id counter.
    private mutating func validatedMessage(_ draft: MessageDraft, in cid: ChannelCID, from userID: String, at now: Timestamp) throws(ReceiptsError) -> Message {
        let channel = try channel(cid)
        _ = try member(userID, of: channel)
        guard draft.text.utf8.count <= Self.maxMessageTextBytes else {
            throw .invalidArgument("message text is longer than \(Self.maxMessageTextBytes) bytes")
        }
        if let parentID = draft.parentID {
            guard let parentIndex = channel.messages.position(of: parentID) else { throw .unknownMessage(parentID) }
            guard !channel.messages.isReply(at: parentIndex) else {
                throw .invalidArgument("message \(parentID) is itself a reply; threads do not nest")
            }
        }
        let id: String
        if let given = draft.id {
            guard !given.isEmpty, given.utf8.count <= Self.maxMessageIDBytes,
                  !given.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw .invalidArgument("message id must be 1 to \(Self.maxMessageIDBytes) printable bytes")
            }
            // Unique within the channel: whether the id is taken elsewhere is none of the sender's business.
            guard channel.messages.position(of: given) == nil else { throw .duplicate("message \(given) in \(cid)") }
            id = given
        } else {
            // Numbered within the channel, from its state alone: the same on every node that applies
            // the command, with no counter shared between channels.
            var number = channel.messages.count + 1
            while channel.messages.position(of: "\(cid.id)-\(number)") != nil { number += 1 }
            id = "\(cid.id)-\(number)"
        }
        let createdAt = channel.messages.lastCreatedAt.map { max(now, $0.successor) } ?? now
        return Message(
            id: id, cid: cid, userID: userID, text: draft.text, kind: draft.kind, createdAt: createdAt,
            parentID: draft.parentID, showInChannel: draft.parentID != nil && draft.showInChannel, silent: draft.silent)
    }
}
