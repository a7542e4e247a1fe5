import CheckmarkCore
import CheckmarkTestSupport

/// Everything durable about an engine's state, plus what is derived from it (unread counts and
/// totals), as one comparable text: two engines with equal fingerprints answer every query alike.
func fingerprint(_ engine: ReceiptsEngine) -> String {
    var lines: [String] = []
    for user in engine.users.values.sorted(by: { $0.id < $1.id }) {
        let custom = String(decoding: CommandCodec.encodeCustom(user.custom), as: UTF8.self)
        lines.append("user \(user.id) \(user.name ?? "-") \(user.image ?? "-") \(custom) \(user.privacy) \(user.createdAt.rawValue) \(user.updatedAt.rawValue)")
        lines.append("  totals \(engine.counts(for: user.id))")
    }
    for type in engine.channelTypes.values.sorted(by: { $0.name < $1.name }) {
        lines.append("type \(type)")
    }
    for channel in engine.channels.values.sorted(by: { $0.cid < $1.cid }) {
        lines.append("channel \(channel.cid) \(channel.createdBy ?? "-") \(channel.createdAt.rawValue) order=\(channel.memberOrder)")
        for message in channel.messages.heldMessages { lines.append("  message \(message)") }
        for id in channel.memberOrder {
            let member = channel.members[id]!
            lines.append("  member \(id) \(member.createdAt.rawValue) \(member.read)")
        }
        lines.append("  channel messages \(channel.channelMessagePositions)")
        for parentID in channel.threads.keys.sorted() {
            let thread = channel.threads[parentID]!
            lines.append("  thread \(parentID) replies=\(thread.replyPositions) countable=\(thread.countableReplies)")
            for userID in thread.reads.keys.sorted() { lines.append("    read \(userID) \(thread.reads[userID]!)") }
        }
    }
    return lines.joined(separator: "\n")
}
