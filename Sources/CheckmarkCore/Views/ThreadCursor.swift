/// Where a page of a user's threads ends (Stream's opaque `next`): the last listed thread's place
/// in the order threads are listed (``ReceiptsEngine/threads(of:after:limit:)``).
public struct ThreadCursor: Sendable, Hashable {
    public var lastMessageAt: Timestamp
    public var cid: ChannelCID
    public var parentID: String

    public init(lastMessageAt: Timestamp, cid: ChannelCID, parentID: String) {
        self.lastMessageAt = lastMessageAt
        self.cid = cid
        self.parentID = parentID
    }

    /// The cursor as `next` carries it: `<microseconds>|<cid>|<parent id>`.
    public var token: String { "\(lastMessageAt.rawValue)|\(cid)|\(parentID)" }

    /// Reads ``token``; nil for anything else.
    public init?(token: String) {
        let parts = token.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let micros = Int64(parts[0]), let cid = ChannelCID(String(parts[1])), !parts[2].isEmpty else { return nil }
        self.init(lastMessageAt: Timestamp(rawValue: micros), cid: cid, parentID: String(parts[2]))
    }

    /// Whether a thread at (`lastMessageAt`, `cid`, `parentID`) is listed after this cursor: newer
    /// activity first, then channel, then parent id.
    func precedes(_ lastMessageAt: Timestamp, _ cid: ChannelCID, _ parentID: String) -> Bool {
        if lastMessageAt != self.lastMessageAt { return lastMessageAt < self.lastMessageAt }
        if cid != self.cid { return cid > self.cid }
        return parentID > self.parentID
    }
}
