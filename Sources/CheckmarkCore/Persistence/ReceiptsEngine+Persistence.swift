extension ReceiptsEngine {
    /// Rebuilds the state a ``snapshot()`` captured. Unread counts (each member's, and each thread
    /// participant's) are taken as the snapshot gives them (a live engine's, or the counts storage
    /// keeps); the rest that is derived (totals, memberships, thread reply lists) is recomputed.
    package init(restoring snapshot: ReceiptsSnapshot) {
        self.init()
        for user in snapshot.users { users[user.id] = user }
        for type in snapshot.channelTypes { channelTypes[type.name] = type }
        for var channel in snapshot.channels {
            channel.rebuildDerivedLists()
            channel.orderMembersByJoinTime()
            // A restored engine has no connection open yet, so nobody watches (a snapshot of a live
            // engine lists its watchers, with their slots in that engine's totals).
            channel.memberConnections = 0
            channel.removeAllWatchers()
            for thread in channel.threads.values {
                for (userID, read) in thread.reads where read.unreadReplies > 0 {
                    adjustThreadTotals(Channel.ThreadChange(userID: userID, old: 0, new: read.unreadReplies))
                }
            }
            for userID in channel.memberOrder {
                let unread = channel.members[userID]!.read.unreadMessages
                let slot = totalsSlot(of: userID)
                channel.members[userID]!.totalsSlot = slot
                membership[userID, default: []].insert(channel.cid)
                adjustTotals(at: slot, from: 0, to: unread)
            }
            channels[channel.cid] = channel
        }
        generatedMessageIDs = snapshot.generatedMessageIDs
        clock = snapshot.clock
    }

    /// The durable state, channels in cid order and users in id order (for comparing two states).
    package func snapshot() -> ReceiptsSnapshot {
        ReceiptsSnapshot(
            users: users.values.sorted { $0.id < $1.id },
            channelTypes: channelTypes.values.sorted { $0.name < $1.name },
            channels: channels.values.sorted { $0.cid < $1.cid },
            generatedMessageIDs: generatedMessageIDs, clock: clock)
    }

    /// Hands over the durable rows the last command changed (``touched``), adding them to `footprint`
    /// (a batch's union), and empties the record keeping its capacity, so that recording allocates
    /// nothing once warm.
    package mutating func takeFootprint(into footprint: inout StateFootprint) {
        footprint.formUnion(touched)
        touched.removeAll(keepingCapacity: true)
    }

    /// Hands over the durable rows the last command changed and starts a new record.
    package mutating func takeFootprint() -> StateFootprint {
        defer { touched = StateFootprint() }
        return touched
    }

    /// Whether a command changes durable state when it changes anything (connection commands do not).
    package static func isDurable(_ command: ReceiptsCommand) -> Bool {
        switch command {
        case .connect, .disconnect, .watch, .stopWatching:
            false
        case .upsertUser, .updateUser, .createChannelType, .updateChannelType, .createChannel, .addMembers,
             .removeMembers, .sendMessage, .markRead, .markReadMany, .markThreadRead, .markUnread, .markDelivered:
            true
        }
    }
}
