/// A user's membership of a channel.
public struct Member: Sendable, Hashable {
    public var userID: String
    /// When the user was added: read states list the most recently added first (rule 10).
    public var createdAt: Timestamp
    public var read: ReadState

    public init(userID: String, createdAt: Timestamp, read: ReadState) {
        self.userID = userID
        self.createdAt = createdAt
        self.read = read
    }
}
