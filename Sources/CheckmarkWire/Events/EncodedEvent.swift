import CheckmarkCore
/// An event's JSON, built once for all its recipients. When the event type carries per-recipient
/// counts, only the short ``suffix(for:)`` differs per recipient; everything else is ``prefix``.
public struct EncodedEvent: Sendable, Hashable {
    /// The JSON shared by all recipients, closed without counts: what the journal and traces keep.
    public private(set) var stored: [UInt8]
    /// Whether recipients' counts are appended.
    public var carriesCounts: Bool
    /// Where ``stored`` holds the event's message object, when the journal may keep that object once,
    /// in storage (`message.new`; see `JournaledMessage`).
    public var messageObject: Range<Int>?
    /// Where ``stored`` holds the event's channel object (`notification.mark_read` of a channel read),
    /// which the journal may keep once for the events that carry the same bytes (see `JournaledChannel`).
    public var channelObject: Range<Int>?

    /// An event from its stored form (as the encoder makes it, and as the journal and traces keep it),
    /// to be completed per recipient.
    public init(stored json: [UInt8], type: String) {
        self.init(stored: json, carriesCounts: ReceiptsEventPayload.carriesCounts(type: type))
    }

    init(stored json: [UInt8], carriesCounts: Bool, messageObject: Range<Int>? = nil, channelObject: Range<Int>? = nil) {
        stored = json
        self.carriesCounts = carriesCounts
        self.messageObject = messageObject
        self.channelObject = channelObject
    }

    /// The JSON object up to (not including) its closing brace: a view of ``stored``, not a copy.
    public var prefix: ArraySlice<UInt8> {
        stored.last == UInt8(ascii: "}") ? stored.dropLast() : stored[...]
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
        // Closed as stored and nothing to add: the stored bytes themselves.
        if !carriesCounts || counts == nil, stored.last == UInt8(ascii: "}") { return stored }
        var json: [UInt8] = []
        json.reserveCapacity(stored.count + Self.maxSuffixSize)
        json.append(contentsOf: prefix)
        appendSuffix(for: counts, to: &json)
        return json
    }
}
