extension ReceiptsEngine {
    /// Rebuilds the state a ``snapshot()`` captured. Unread counts (each member's, and each thread
    /// participant's) are taken as the snapshot gives them (a live engine's, or the counts storage
    /// keeps); the rest that is derived (totals, memberships, thread reply lists) is recomputed.
    /// Dormant channels count in their members' totals and memberships as they are.
    package init(restoring snapshot: ReceiptsSnapshot) {
        self.init()
        for user in snapshot.users { users[user.id] = user }
        for type in snapshot.channelTypes { channelTypes[type.name] = type }
        for channel in snapshot.channels {
            // A restored engine has no connection open yet, so nobody watches (a snapshot of a live
            // engine lists its watchers, with their slots in that engine's totals).
            adopt(channel, replacing: nil)
        }
        for dormant in snapshot.dormantChannels {
            for member in dormant.members {
                let slot = totalsSlot(of: member.userID)
                membership[member.userID, default: []].insert(dormant.cid)
                adjustTotals(at: slot, from: 0, to: member.unreadMessages)
                slotTotals[Int(slot.index)].unreadThreads += member.unreadThreads
            }
            dormantChannels[dormant.cid] = dormant
        }
        clock = snapshot.clock
    }

    /// Takes in a dormant channel that storage loaded whole (its messages, members and threads as of
    /// now: nothing changes a dormant channel). Its members' totals move from what the dormant channel
    /// said to what the loaded one says (the same, for a channel stored consistently); members with
    /// connections open count in ``Channel/memberConnections``. Returns false, changing nothing,
    /// when the channel is not dormant (already installed, or unknown).
    @discardableResult
    package mutating func install(_ channel: Channel) -> Bool {
        guard let dormant = dormantChannels.removeValue(forKey: channel.cid) else { return false }
        adopt(channel, replacing: dormant)
        return true
    }

    /// Puts the resident channel `cid` back in storage's keeping: it becomes dormant, keeping what
    /// ``DormantChannel/init(of:)`` keeps (its members' totals and memberships stay as they are), and
    /// the next command or query that needs it has it loaded again (``install(_:)``). Only a channel
    /// storage holds exactly as it is here may go: the caller guarantees that no change of it waits for
    /// a commit. Returns false, changing nothing, when the channel is not resident, a connection
    /// watches it, one of its messages or edits is not durable yet (``MessageLog/durableCount``,
    /// ``MessageLog/hasPendingEdits``), or rows of it
    /// are noted for the next footprint (``touched``).
    @discardableResult
    package mutating func evict(_ cid: ChannelCID) -> Bool {
        guard let channel = channels[cid], channel.watchers.isEmpty, channel.messages.durableCount == channel.messages.count,
              !channel.messages.hasPendingEdits,
              !touched.channelIDs.contains(cid) else { return false }
        channels[cid] = nil
        dormantChannels[cid] = DormantChannel(of: channel)
        return true
    }

    /// Makes `channel` resident as stored: derived lists rebuilt, members in join order, no watchers,
    /// its members' totals, memberships and open connections counted (those `replacing` counted are
    /// moved, not added again).
    private mutating func adopt(_ channel: Channel, replacing dormant: DormantChannel?) {
        var channel = channel
        channel.rebuildDerivedLists()
        channel.orderMembersByJoinTime()
        channel.removeAllWatchers()
        var counted: [String: DormantChannel.Member] = [:]
        for member in dormant?.members ?? [] { counted[member.userID] = member }
        var unreadThreads: [String: Int] = [:]
        for thread in channel.threads.values {
            for (userID, read) in thread.reads where read.unreadReplies > 0 { unreadThreads[userID, default: 0] += 1 }
        }
        for (userID, count) in unreadThreads { slotTotals[Int(totalsSlot(of: userID).index)].unreadThreads += count }
        for member in dormant?.members ?? [] { slotTotals[Int(totalsSlot(of: member.userID).index)].unreadThreads -= member.unreadThreads }
        var memberConnections = 0
        for userID in channel.memberOrder {
            let unread = channel.members[userID]!.read.unreadMessages
            let slot = totalsSlot(of: userID)
            channel.members[userID]!.totalsSlot = slot
            membership[userID, default: []].insert(channel.cid)
            adjustTotals(at: slot, from: counted.removeValue(forKey: userID)?.unreadMessages ?? 0, to: unread)
            memberConnections += connections(of: userID).count
        }
        // Members the dormant channel listed and the loaded one does not: no longer counted.
        for (userID, before) in counted {
            adjustTotals(at: totalsSlot(of: userID), from: before.unreadMessages, to: 0)
            membership[userID]?.remove(channel.cid)
        }
        channel.memberConnections = memberConnections
        channels[channel.cid] = channel
    }

    /// The dormant channels `command` needs whole before it can be applied (``install(_:)``), in cid
    /// order: those it names, and for a mark-all-read those of the user's where the read pointer
    /// would move. Empty when it needs none (the command is applied as it is).
    /// - Throws: what the command itself answers a user who is unknown (`unknownUser`), a connection
    ///   that is not open (`unknownConnection`), or a user who is not a member of a dormant channel it
    ///   names (`notAMember`): refused without loading what the user may not touch.
    public func channelsToLoad(for command: ReceiptsCommand) throws(ReceiptsError) -> [ChannelCID] {
        guard !dormantChannels.isEmpty else { return [] }
        var named: [ChannelCID]
        var actor: String?
        switch command {
        case .upsertUser, .updateUser, .createChannelType, .updateChannelType, .connect, .disconnect, .stopWatching:
            return []
        case .createChannel(let cid, _, _), .addMembers(let cid, _), .removeMembers(let cid, _):
            named = [cid]
        case .sendMessage(let cid, let userID, _), .markRead(let cid, let userID, _), .markThreadRead(let cid, let userID, _),
             .markUnread(let cid, let userID, _):
            (named, actor) = ([cid], userID)
        case .updateMessage(let cid, _, _, let editor), .deleteMessage(let cid, _, _, let editor):
            (named, actor) = ([cid], editor)
        case .sendReaction(let cid, _, let userID, _, _, _), .deleteReaction(let cid, _, let userID, _):
            (named, actor) = ([cid], userID)
        case .watch(let connectionID, let cid):
            guard let handle = connections.handle(of: connectionID) else { throw .unknownConnection(connectionID) }
            (named, actor) = ([cid], connections.userID(of: handle))
        case .markReadMany(let userID, let targets):
            actor = userID
            if let targets {
                named = targets.map(\.cid)
            } else {
                named = (membership[userID] ?? []).filter { cid in
                    guard let dormant = dormantChannels[cid], let member = dormant.member(userID) else { return false }
                    return member.readPosition < dormant.messageCount
                }
            }
        case .markDelivered(let userID, let latest):
            (named, actor) = (latest.map(\.cid), userID)
        }
        named = named.filter { dormantChannels[$0] != nil }
        if let actor, !named.isEmpty {
            guard users[actor] != nil else { throw .unknownUser(actor) }
            if let outside = named.first(where: { dormantChannels[$0]!.member(actor) == nil }) {
                throw .notAMember(user: actor, cid: outside)
            }
        }
        return Set(named).sorted()
    }

    /// The durable state, channels in cid order and users in id order (for comparing two states).
    package func snapshot() -> ReceiptsSnapshot {
        ReceiptsSnapshot(
            users: users.values.sorted { $0.id < $1.id },
            channelTypes: channelTypes.values.sorted { $0.name < $1.name },
            channels: channels.values.sorted { $0.cid < $1.cid },
            dormantChannels: dormantChannels.values.sorted { $0.cid < $1.cid },
            clock: clock)
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
             .removeMembers, .sendMessage, .updateMessage, .deleteMessage, .sendReaction, .deleteReaction, .markRead, .markReadMany, .markThreadRead, .markUnread, .markDelivered:
            true
        }
    }
}
