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
            guard let index = channel.messageIndex[target.messageID] else { throw .unknownMessage(target.messageID) }
            let message = channel.messages[index]
            guard type(of: channel).deliveryEvents, message.isChannelMessage, message.userID != userID else { continue }
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
            let channel = channels[cid]!
            var read = channel.members[userID]!.read
            let position = index + 1
            guard position > read.deliveredPosition else { continue }
            let message = channel.messages[index]
            read.deliveredPosition = position
            read.lastDeliveredMessageID = message.id
            // Like last_read: the confirmation time when nothing newer exists, else the message's own time,
            // so that "last_delivered_at >= created_at" tells exactly which messages are delivered.
            read.lastDeliveredAt = position == channel.messages.count ? max(now, message.createdAt) : message.createdAt
            read.deliveredPasses.record(position: position, at: now)
            channels[cid]!.members[userID]!.read = read
            changed = true
            let recipients = receiptRecipients(of: channel, subject: userID, shareable: user.privacy.deliveryReceipts)
            if !recipients.isEmpty {
                events.append(ReceiptsEvent(
                    payload: .messageDelivered(user: user, lastDeliveredMessageID: message.id, lastDeliveredAt: read.lastDeliveredAt!),
                    cid: cid, createdAt: now, recipients: recipients))
            }
        }
        return changed ? ReceiptsOutcome(events: events) : .unchanged
    }
}
