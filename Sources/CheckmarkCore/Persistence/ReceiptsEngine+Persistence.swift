extension ReceiptsEngine {
    /// Rebuilds the state a ``snapshot()`` captured. Derived state (unread counts, totals, memberships,
    /// the message index) is recomputed from the pointers and messages, so it cannot disagree with them.
    public init(restoring snapshot: ReceiptsSnapshot) {
        self.init()
        for user in snapshot.users { users[user.id] = user }
        for type in snapshot.channelTypes { channelTypes[type.name] = type }
        for var channel in snapshot.channels {
            channel.messageIndex = [:]
            channel.messageIndex.reserveCapacity(channel.messages.count)
            for (index, message) in channel.messages.enumerated() {
                channel.messageIndex[message.id] = index
                recordMessageChannel(message.id, channel.cid)
            }
            channel.rebuildDerivedLists()
            channel.orderMembersByJoinTime()
            for thread in channel.threads.values {
                for (userID, read) in thread.reads where read.unreadReplies > 0 {
                    adjustThreadTotals(Channel.ThreadChange(userID: userID, old: 0, new: read.unreadReplies))
                }
            }
            for userID in channel.memberOrder {
                let position = channel.members[userID]!.read.readPosition
                let unread = channel.countUnread(for: userID, from: position)
                channel.members[userID]!.read.unreadMessages = unread
                membership[userID, default: []].insert(channel.cid)
                adjustTotals(of: userID, from: 0, to: unread)
            }
            channels[channel.cid] = channel
        }
        generatedMessageIDs = snapshot.generatedMessageIDs
        clock = snapshot.clock
    }

    /// The durable state, channels in cid order and users in id order (for comparing two states).
    public func snapshot() -> ReceiptsSnapshot {
        ReceiptsSnapshot(
            users: users.values.sorted { $0.id < $1.id },
            channelTypes: channelTypes.values.sorted { $0.name < $1.name },
            channels: channels.values.sorted { $0.cid < $1.cid },
            generatedMessageIDs: generatedMessageIDs, clock: clock)
    }

    /// The durable rows `command` changed, for a command that was just applied successfully with
    /// `changed` true. Connection commands change nothing durable.
    public func footprint(of command: ReceiptsCommand) -> StateFootprint {
        var footprint = StateFootprint()
        addFootprint(of: command, to: &footprint)
        return footprint
    }

    /// Adds the rows `command` changed to a batch's footprint (no intermediate sets per command).
    public func addFootprint(of command: ReceiptsCommand, to footprint: inout StateFootprint) {
        switch command {
        case .upsertUser(let user):
            footprint.users.insert(user.id)
        case .updateUser(let patch):
            footprint.users.insert(patch.id)
        case .createChannelType(let type):
            footprint.channelTypes.insert(type.name)
        case .updateChannelType(let name, _, _):
            footprint.channelTypes.insert(name)
        case .createChannel(let cid, _, _), .addMembers(let cid, _), .removeMembers(let cid, _):
            footprint.channels.insert(cid)
        case .connect, .disconnect, .watch, .stopWatching:
            return
        case .sendMessage(let cid, let userID, _):
            if let channel = channels[cid], !channel.messages.isEmpty {
                footprint.messages.insert(.init(cid: cid, position: channel.messages.count - 1))
            }
            footprint.members.insert(.init(cid: cid, userID: userID))
            if let channel = channels[cid], let reply = channel.messages.last, reply.userID == userID,
               let parentID = reply.parentID, let thread = channel.threads[parentID] {
                // The author's pointer moved; a new thread adds its parent's author too.
                for participant in [userID, channel.messageIndex[parentID].map { channel.messages[$0].userID }] {
                    if let participant, thread.reads[participant] != nil {
                        footprint.threadReads.insert(.init(cid: cid, parentID: parentID, userID: participant))
                    }
                }
            }
        case .markThreadRead(let cid, let userID, let parentID):
            footprint.threadReads.insert(.init(cid: cid, parentID: parentID, userID: userID))
        case .markRead(let cid, let userID, _), .markUnread(let cid, let userID, _):
            footprint.members.insert(.init(cid: cid, userID: userID))
        case .markReadMany(let userID, let targets):
            if let targets {
                for target in targets { footprint.members.insert(.init(cid: target.cid, userID: userID)) }
            } else {
                for cid in membership[userID] ?? [] { footprint.members.insert(.init(cid: cid, userID: userID)) }
            }
        case .markDelivered(let userID, let latest):
            for target in latest { footprint.members.insert(.init(cid: target.cid, userID: userID)) }
        }
        footprint.counters = true
    }

    /// Whether a command changes durable state when it changes anything (connection commands do not).
    public static func isDurable(_ command: ReceiptsCommand) -> Bool {
        switch command {
        case .connect, .disconnect, .watch, .stopWatching: false
        default: true
        }
    }
}
