/// A thread: the replies to one of the channel's messages (its parent) and the read state of each
/// participant. Participants are the parent's author (from the first reply on), everyone who replied,
/// and any member who marked the thread read; only members participate.
public struct MessageThread: Sendable, Hashable {
    /// The id of the message the replies answer (Stream's `parent_id` and `thread_id`).
    public var parentID: String
    /// Positions of the replies in the channel's message list, oldest first (derived on restore).
    public var replyPositions: [Int] = []
    /// Replies that count as unread for participants other than their author: those not silent. A
    /// participant's unread replies are this total less the total when it last read, less its own
    /// since; storage keeps the total as seen by each participant.
    public internal(set) var countableReplies = 0
    /// Each participant's read state in this thread.
    public var reads: [String: ThreadReadState] = [:]

    public init(parentID: String) {
        self.parentID = parentID
    }
}
