import CheckmarkCore

/// Tracks each user's privacy settings from the commands of a trace, independently of the engine, and
/// checks that no read or delivery receipt of a user who turned it off reached anyone else (rules 6,
/// 7 and 9: a change takes effect for the very next event).
struct PrivacyOracle {
    private var settings: [String: PrivacySettings] = [:]

    mutating func apply(_ command: ReceiptsCommand) {
        switch command {
        case .upsertUser(let user):
            settings[user.id] = user.privacy
        case .updateUser(let patch):
            for (key, value) in patch.set where key == "privacy_settings" {
                var current = settings[patch.id] ?? PrivacySettings()
                if let read = value["read_receipts"]?["enabled"]?.boolValue { current.readReceipts = read }
                if let delivery = value["delivery_receipts"]?["enabled"]?.boolValue { current.deliveryReceipts = delivery }
                settings[patch.id] = current
            }
            if patch.unset.contains("privacy_settings") { settings[patch.id] = PrivacySettings() }
        case .createChannelType, .updateChannelType, .createChannel, .addMembers, .removeMembers, .connect, .disconnect, .watch,
             .stopWatching, .sendMessage, .updateMessage, .deleteMessage, .sendReaction, .deleteReaction, .markRead, .markReadMany, .markThreadRead, .markUnread, .markDelivered:
            break
        }
    }

    /// Receipts in `events` that reached someone other than a subject whose setting withholds them.
    func violations(in events: [ReceiptsEvent], command: Int64) -> [String] {
        var found: [String] = []
        for event in events {
            let subject: String
            let allowed: Bool
            switch event.payload {
            case .messageRead(let user, _, _):
                subject = user.id
                allowed = settings[user.id]?.readReceipts ?? true
            case .messageDelivered(let user, _, _):
                subject = user.id
                allowed = settings[user.id]?.deliveryReceipts ?? true
            default:
                continue
            }
            guard !allowed else { continue }
            for recipient in event.recipients where recipient.userID != subject {
                found.append("command \(command): \(event.type) of \(subject), whose setting withholds it, reached \(recipient.userID)")
            }
        }
        return found
    }
}
