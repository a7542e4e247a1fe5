/// A member's read and delivery pointers in one channel (contract: Entities, Rules 1-5).
///
/// Positions index the channel's message list: messages `0..<readPosition` are read and
/// `0..<deliveredPosition` delivered. `deliveredPosition >= readPosition` always (rule 2).
public struct ReadState: Sendable, Hashable {
    public var readPosition: Int
    public var lastRead: Timestamp
    public var lastReadMessageID: String?
    /// Messages after the read pointer that count for this member (rule 4).
    public var unreadMessages: Int
    public var deliveredPosition: Int
    public var lastDeliveredAt: Timestamp?
    public var lastDeliveredMessageID: String?
    /// The message a mark unread started from, while the read pointer still stands just before it.
    public var markedUnreadMessageID: String?
    /// When the read pointer first passed each position (per-message receipts).
    public var readPasses: PointerPasses
    /// When the delivered pointer first passed each position (read passes raise it too).
    public var deliveredPasses: PointerPasses

    /// The state of a member added at `time` when the channel holds `messageCount` messages: nothing
    /// from before counts as unread (and no receipt is recorded for it).
    public init(joinedAt time: Timestamp, messageCount: Int) {
        readPosition = messageCount
        lastRead = time
        lastReadMessageID = nil
        unreadMessages = 0
        deliveredPosition = messageCount
        lastDeliveredAt = nil
        lastDeliveredMessageID = nil
        markedUnreadMessageID = nil
        readPasses = []
        deliveredPasses = []
    }
}
