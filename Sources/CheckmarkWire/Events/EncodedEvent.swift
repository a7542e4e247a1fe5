import CheckmarkCore
/// An event's JSON, built once for all its recipients. When the event type carries per-recipient
/// counts, only the short ``suffix(for:)`` differs per recipient; everything else is ``prefix``.
public struct EncodedEvent: Sendable, Hashable {
    /// The JSON object up to (not including) its closing brace.
    public var prefix: [UInt8]
    /// Whether recipients' counts are appended.
    public var carriesCounts: Bool

    public init(prefix: [UInt8], carriesCounts: Bool) {
        self.prefix = prefix
        self.carriesCounts = carriesCounts
    }

    /// The event back from its stored form (``stored``, as the journal and traces keep it), to be
    /// completed per recipient again.
    public init(stored json: [UInt8], type: String) {
        self.init(prefix: json.last == UInt8(ascii: "}") ? Array(json.dropLast()) : json,
                  carriesCounts: ReceiptsEventPayload.carriesCounts(type: type))
    }

    /// The JSON shared by all recipients, closed without counts: what the journal and traces keep.
    public var stored: [UInt8] {
        var json: [UInt8] = []
        json.reserveCapacity(prefix.count + 1)
        json.append(contentsOf: prefix)
        appendSuffix(for: nil, to: &json)
        return json
    }

    /// The bytes after ``prefix`` for one recipient: its counts (if carried) and the closing brace.
    public func suffix(for counts: UnreadCounts?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.maxSuffixSize)
        appendSuffix(for: counts, to: &out)
        return out
    }

    /// Longest possible suffix, in bytes.
    public static let maxSuffixSize = 160

    /// Appends the suffix for one recipient; one call, no intermediate strings.
    public func appendSuffix(for counts: UnreadCounts?, to out: inout [UInt8]) {
        guard carriesCounts, let counts else {
            out.append(UInt8(ascii: "}"))
            return
        }
        out.append(contentsOf: Self.unreadCountKey)
        JSONWriter.appendDecimal(counts.totalUnread, to: &out)
        out.append(contentsOf: Self.totalUnreadCountKey)
        JSONWriter.appendDecimal(counts.totalUnread, to: &out)
        out.append(contentsOf: Self.unreadChannelsKey)
        JSONWriter.appendDecimal(counts.unreadChannels, to: &out)
        out.append(contentsOf: Self.unreadThreadsKey)
        JSONWriter.appendDecimal(counts.unreadThreads, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    private static let unreadCountKey = Array(#","unread_count":"#.utf8)
    private static let totalUnreadCountKey = Array(#","total_unread_count":"#.utf8)
    private static let unreadChannelsKey = Array(#","unread_channels":"#.utf8)
    private static let unreadThreadsKey = Array(#","unread_threads":"#.utf8)

    /// The whole JSON for one recipient.
    public func json(for counts: UnreadCounts?) -> [UInt8] {
        prefix + suffix(for: counts)
    }
}
