extension ReceiptsEngine {
    mutating func createChannel(_ cid: ChannelCID, createdBy: String?, members: [String], at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        guard channelTypes[cid.type] != nil else { throw .unknownChannelType(cid.type) }
        if channels[cid] != nil { return ReceiptsOutcome(result: .channel(cid, created: false), changed: false) }
        if let createdBy { _ = try user(createdBy) }
        for id in members { _ = try user(id) }
        channels[cid] = Channel(cid: cid, createdBy: createdBy, createdAt: now)
        touched.channels.insert(cid)
        insertMembers(members, into: cid, at: now)
        return ReceiptsOutcome(result: .channel(cid, created: true))
    }

    mutating func addMembers(_ cid: ChannelCID, _ userIDs: [String], at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        _ = try channel(cid)
        for id in userIDs { _ = try user(id) }
        let added = insertMembers(userIDs, into: cid, at: now)
        return added ? ReceiptsOutcome(result: .channel(cid, created: false)) : .unchanged
    }

    mutating func removeMembers(_ cid: ChannelCID, _ userIDs: [String]) throws(ReceiptsError) -> ReceiptsOutcome {
        _ = try channel(cid)
        var removed = false
        for id in userIDs {
            guard let member = channels[cid]!.members.removeValue(forKey: id) else { continue }
            adjustTotals(of: id, from: member.read.unreadMessages, to: 0)
            for unread in channels[cid]!.leaveThreads(id) {
                adjustThreadTotals(Channel.ThreadChange(userID: id, old: unread, new: 0))
            }
            channels[cid]!.memberOrder.removeAll { $0 == id }
            channels[cid]!.memberConnections -= connections(of: id).count
            membership[id]?.remove(cid)
            // Only members may watch: the user's connections stop watching.
            // The handles first: walking the table's slots while changing one would copy them all.
            for connection in Array(connections(of: id)) where channels[cid]!.removeWatcher(connection) {
                connections.removeWatching(cid, at: connection)
            }
            removed = true
            touched.channels.insert(cid)
        }
        return removed ? ReceiptsOutcome(result: .channel(cid, created: false)) : .unchanged
    }

    /// Adds the users that are not members yet; returns whether any was added.
    @discardableResult
    private mutating func insertMembers(_ userIDs: [String], into cid: ChannelCID, at now: Timestamp) -> Bool {
        var added = false
        for id in userIDs where channels[cid]!.members[id] == nil {
            let count = channels[cid]!.messages.count
            var member = Member(userID: id, createdAt: now, read: ReadState(joinedAt: now, messageCount: count))
            member.totalsSlot = totalsSlot(of: id)
            channels[cid]!.members[id] = member
            channels[cid]!.memberOrder.append(id)
            channels[cid]!.memberConnections += connections(of: id).count
            membership[id, default: []].insert(cid)
            added = true
            touched.channels.insert(cid)
        }
        return added
    }
}
