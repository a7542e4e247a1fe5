extension ReceiptsEngine {
    mutating func connect(_ connectionID: String, _ userID: String) throws(ReceiptsError) -> ReceiptsOutcome {
        _ = try user(userID)
        guard !connectionID.isEmpty else { throw .invalidArgument("a connection id may not be empty") }
        guard connections[connectionID] == nil else { throw .duplicate("connection \(connectionID)") }
        try checkConnectionLimit(of: userID)
        let handle = connections.open(connectionID, userID: userID)
        // Last in the user's list: their connections stay in the order they opened.
        var last = users.firstConnection(of: userID)
        if last == ConnectionTable.none {
            users.setFirstConnection(of: userID, to: handle.slot)
        } else {
            while case let next = connections.nextOfUser(after: last), next != ConnectionTable.none { last = next }
            connections.setNextOfUser(after: last, to: handle.slot)
        }
        for cid in membership[userID] ?? [] { channels[cid]?.memberConnections += 1 }
        return ReceiptsOutcome()
    }

    mutating func disconnect(_ connectionID: String) -> ReceiptsOutcome {
        guard let handle = connections.handle(of: connectionID) else { return .unchanged }
        let userID = connections.userID(of: handle)
        let next = connections.nextOfUser(after: handle.slot)
        let first = users.firstConnection(of: userID)
        if first == handle.slot {
            users.setFirstConnection(of: userID, to: next)
        } else {
            var previous = first
            while case let after = connections.nextOfUser(after: previous), after != handle.slot { previous = after }
            connections.setNextOfUser(after: previous, to: next)
        }
        for cid in membership[userID] ?? [] { channels[cid]?.memberConnections -= 1 }
        for cid in connections.close(handle) {
            channels[cid]?.removeWatcher(handle)
        }
        return ReceiptsOutcome()
    }

    /// Only members may watch.
    mutating func watch(_ connectionID: String, _ cid: ChannelCID) throws(ReceiptsError) -> ReceiptsOutcome {
        guard let handle = connections.handle(of: connectionID) else { throw .unknownConnection(connectionID) }
        let userID = connections.userID(of: handle)
        let channel = try channel(cid)
        _ = try member(userID, of: channel)
        if !channel.watcherSet.contains(handle), connections.watching(at: handle).count >= maxWatchedChannelsPerConnection {
            throw .tooManyWatchedChannels(limit: maxWatchedChannelsPerConnection)
        }
        let slot = totalsSlot(of: userID)
        guard channels[cid]!.addWatcher(handle, userID: userID, totalsSlot: slot) else { return .unchanged }
        connections.insertWatching(cid, at: handle)
        return ReceiptsOutcome()
    }

    mutating func stopWatching(_ connectionID: String, _ cid: ChannelCID) throws(ReceiptsError) -> ReceiptsOutcome {
        guard let handle = connections.handle(of: connectionID) else { throw .unknownConnection(connectionID) }
        // Nobody watches a dormant channel: nothing to stop, and nothing to load.
        if dormantChannels[cid] != nil { return .unchanged }
        _ = try channel(cid)
        guard channels[cid]!.removeWatcher(handle) else { return .unchanged }
        connections.removeWatching(cid, at: handle)
        return ReceiptsOutcome()
    }

    /// Every watcher of the channel, with their user's totals when `withCounts`.
    func watcherRecipients(of channel: Channel, withCounts: Bool) -> [Recipient] {
        var recipients: [Recipient] = []
        recipients.reserveCapacity(channel.watchers.count)
        for watcher in channel.watchers {
            recipients.append(Recipient(connection: watcher.connection, connectionID: connections.id(of: watcher.connection), userID: watcher.userID,
                                        counts: withCounts ? counts(at: watcher.totalsSlot) : nil))
        }
        return recipients
    }

    /// The watchers of `cid` a signal reaches: all of them, or all but `excluded`'s connections; none
    /// when the channel is not in memory (nobody watches a dormant channel).
    public func signalRecipients(in cid: ChannelCID, excluding excluded: String?) -> [Recipient] {
        channels[cid].map { signalRecipients(of: $0, excluding: excluded) } ?? []
    }

    /// The watchers of the channel a signal reaches: all of them, or all but `excluded`'s connections.
    func signalRecipients(of channel: Channel, excluding excluded: String?) -> [Recipient] {
        var recipients: [Recipient] = []
        recipients.reserveCapacity(channel.watchers.count)
        for watcher in channel.watchers where watcher.userID != excluded {
            recipients.append(Recipient(connection: watcher.connection, connectionID: connections.id(of: watcher.connection),
                                        userID: watcher.userID, counts: nil))
        }
        return recipients
    }

    /// Every connection of one user, with their totals when `withCounts`.
    func ownRecipients(of userID: String, withCounts: Bool) -> [Recipient] {
        connections(of: userID).map {
            Recipient(connection: $0, connectionID: connections.id(of: $0), userID: userID, counts: withCounts ? counts(for: userID) : nil)
        }
    }

    /// The receivers of a receipt about `subject`: every watcher when the receipt may be shown, else only
    /// the subject's own watching connections (rules 6 and 7: privacy is enforced here, once).
    func receiptRecipients(of channel: Channel, subject: String, shareable: Bool) -> [Recipient] {
        Self.receiptRecipients(among: channel.watchers, subject: subject, shareable: shareable, connections: connections)
    }

    /// ``receiptRecipients(of:subject:shareable:)`` among a channel's `watchers`, for a caller holding
    /// the channel in place (`markRead`).
    static func receiptRecipients(among watchers: [Channel.Watcher], subject: String, shareable: Bool, connections: ConnectionTable) -> [Recipient] {
        var recipients: [Recipient] = []
        recipients.reserveCapacity(shareable ? watchers.count : 1)
        for watcher in watchers where shareable || watcher.userID == subject {
            recipients.append(Recipient(connection: watcher.connection, connectionID: connections.id(of: watcher.connection),
                                        userID: watcher.userID, counts: nil))
        }
        return recipients
    }
}
