/// An event's JSON, built once for all its recipients. When the event type carries per-recipient
/// counts, only the short ``suffix(for:)`` differs per recipient; everything else is ``prefix``.
public struct EncodedEvent: Sendable, Hashable {
    /// The JSON object up to (not including) its closing brace.
    public var prefix: [UInt8]
    /// Whether recipients' counts are appended.
    public var carriesCounts: Bool

    /// The bytes after ``prefix`` for one recipient: its counts (if carried) and the closing brace.
    public func suffix(for counts: UnreadCounts?) -> [UInt8] {
        guard carriesCounts, let counts else { return [UInt8(ascii: "}")] }
        return Array(",\"unread_count\":\(counts.totalUnread),\"total_unread_count\":\(counts.totalUnread),\"unread_channels\":\(counts.unreadChannels)}".utf8)
    }

    /// The whole JSON for one recipient.
    public func json(for counts: UnreadCounts?) -> [UInt8] {
        prefix + suffix(for: counts)
    }
}
