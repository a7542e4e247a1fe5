/// One user's reaction of one type to a message (Stream's `ReactionResponse`; rules R1-R5 of
/// docs/protocol.md). A user has at most one reaction of each type on a message.
public struct Reaction: Sendable, Hashable {
    public var userID: String
    public var type: String
    /// 1 unless the app gives one (Stream's cumulative reactions, a clap counter).
    public var score: Int
    public var createdAt: Timestamp
    /// The last time the same user sent it again (a new score); `createdAt` until then.
    public var updatedAt: Timestamp

    public init(userID: String, type: String, score: Int = 1, createdAt: Timestamp, updatedAt: Timestamp? = nil) {
        self.userID = userID
        self.type = type
        self.score = score
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }
}
