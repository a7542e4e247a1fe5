extension ReceiptsEngine {
    /// Rule 5: delivery covers channel messages only; confirmations of thread-only replies, of one's own
    /// messages and in channel types with `delivery_events` off are ignored. Unknown channels or
    /// messages and channels the user is not a member of are refused before anything changes.
    mutating func markDelivered(_ userID: String, _ latest: [DeliveredTarget], at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        let user = try user(userID)
        var furthest: [ChannelCID: Int] = [:]
        var order: [ChannelCID] = []
        for target in latest {
            let channel = try channel(target.cid)
            _ = try member(userID, of: channel)
            guard let index = channel.messages.position(of: target.messageID) else { throw .unknownMessage(target.messageID) }
            guard type(of: channel).deliveryEvents, channel.messages.isChannelMessage(at: index),
                  channel.messages.userID(at: index) != userID else { continue }
            if let known = furthest[target.cid] {
                furthest[target.cid] = max(known, index)
            } else {
                furthest[target.cid] = index
                order.append(target.cid)
            }
        }
        var events: [ReceiptsEvent] = []
        var changed = false
        for cid in order {
            let index = furthest[cid]!
            guard let at = channels[cid]!.advanceDelivered(of: userID, past: index, at: now) else { continue }
            changed = true
            touched.members.insert(.init(cid: cid, userID: userID))
            let channel = channels[cid]!
            let messageID = channel.messages.id(at: index)
            let recipients = receiptRecipients(of: channel, subject: userID, shareable: user.privacy.deliveryReceipts)
            events.append(ReceiptsEvent(
                payload: .messageDelivered(user: user, lastDeliveredMessageID: messageID, lastDeliveredAt: at),
                cid: cid, createdAt: now, recipients: recipients))
        }
        return changed ? ReceiptsOutcome(events: events) : .unchanged
    }
}
