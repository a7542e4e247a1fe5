extension ReceiptsEngine {
    mutating func connect(_ connectionID: String, _ userID: String) throws(ReceiptsError) -> ReceiptsOutcome {
        _ = try user(userID)
        guard connections[connectionID] == nil else { throw .duplicate("connection \(connectionID)") }
        connections[connectionID] = userID
        userConnections[userID, default: []].append(connectionID)
        for cid in membership[userID] ?? [] { channels[cid]?.memberConnections += 1 }
        return ReceiptsOutcome()
    }

    mutating func disconnect(_ connectionID: String) -> ReceiptsOutcome {
        guard let userID = connections.removeValue(forKey: connectionID) else { return .unchanged }
        userConnections[userID]?.remove(connectionID)
        if userConnections[userID]?.isEmpty == true { userConnections[userID] = nil }
        for cid in membership[userID] ?? [] { channels[cid]?.memberConnections -= 1 }
        for cid in watching.removeValue(forKey: connectionID) ?? [] {
            channels[cid]?.removeWatcher(connectionID)
        }
        return ReceiptsOutcome()
    }

    /// Only members may watch.
    mutating func watch(_ connectionID: String, _ cid: ChannelCID) throws(ReceiptsError) -> ReceiptsOutcome {
        guard let userID = connections[connectionID] else { throw .unknownConnection(connectionID) }
        let channel = try channel(cid)
        _ = try member(userID, of: channel)
        if !channel.watcherSet.contains(connectionID), watching[connectionID, default: []].count >= maxWatchedChannelsPerConnection {
            throw .tooManyWatchedChannels(limit: maxWatchedChannelsPerConnection)
        }
        let slot = totalsSlot(of: userID)
        guard channels[cid]!.addWatcher(connectionID, userID: userID, totalsSlot: slot) else { return .unchanged }
        watching[connectionID, default: []].insert(cid)
        return ReceiptsOutcome()
    }

    mutating func stopWatching(_ connectionID: String, _ cid: ChannelCID) throws(ReceiptsError) -> ReceiptsOutcome {
        guard connections[connectionID] != nil else { throw .unknownConnection(connectionID) }
        _ = try channel(cid)
        guard channels[cid]!.removeWatcher(connectionID) else { return .unchanged }
        watching[connectionID]?.remove(cid)
        return ReceiptsOutcome()
    }

    /// Every watcher of the channel, with their user's totals when `withCounts`.
    func watcherRecipients(of channel: Channel, withCounts: Bool) -> [Recipient] {
        var recipients: [Recipient] = []
        recipients.reserveCapacity(channel.watchers.count)
        for watcher in channel.watchers {
            recipients.append(Recipient(connectionID: watcher.connectionID, userID: watcher.userID,
                                        counts: withCounts ? counts(at: watcher.totalsSlot) : nil))
        }
        return recipients
    }

    /// Every connection of one user, with their totals when `withCounts`.
    func ownRecipients(of userID: String, withCounts: Bool) -> [Recipient] {
        connections(of: userID).map { Recipient(connectionID: $0, userID: userID, counts: withCounts ? counts(for: userID) : nil) }
    }

    /// The receivers of a receipt about `subject`: every watcher when the receipt may be shown, else only
    /// the subject's own watching connections (rules 6 and 7: privacy is enforced here, once).
    func receiptRecipients(of channel: Channel, subject: String, shareable: Bool) -> [Recipient] {
        let all = watcherRecipients(of: channel, withCounts: false)
        return shareable ? all : all.filter { $0.userID == subject }
    }
}
