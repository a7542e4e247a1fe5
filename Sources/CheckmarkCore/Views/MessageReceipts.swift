/// Who has read one message and who has it delivered but unread, with the exact time each member's
/// pointer first passed it (beyond Stream, whose times are per channel), privacy applied to the viewer.
public struct MessageReceipts: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        public var user: User
        public var at: Timestamp
        public init(user: User, at: Timestamp) {
            self.user = user
            self.at = at
        }
    }

    /// The message's id.
    public var messageID: String
    /// Members whose read pointer is past the message now, earliest first.
    public var readBy: [Entry]
    /// Members it was delivered to who have not read it, earliest first.
    public var deliveredTo: [Entry]

    /// How many members have read it (the blue double check when above zero).
    public var readCount: Int { readBy.count }
    /// How many members have it delivered, read or not (the double check when above zero).
    public var deliveredCount: Int { readBy.count + deliveredTo.count }

    public init(messageID: String, readBy: [Entry], deliveredTo: [Entry]) {
        self.messageID = messageID
        self.readBy = readBy
        self.deliveredTo = deliveredTo
    }
}
