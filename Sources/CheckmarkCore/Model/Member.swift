/// A user's membership of a channel. Two members are equal when their user, join time and read state
/// are: the totals slot is the engine's bookkeeping.
public struct Member: Sendable, Hashable {
    public var userID: String
    /// When the user was added: read states list the most recently added first (rule 10).
    public var createdAt: Timestamp
    public var read: ReadState
    /// The user's place in the engine's totals, set when the engine takes the member in.
    public internal(set) var totalsSlot = TotalsSlot.unassigned

    public init(userID: String, createdAt: Timestamp, read: ReadState) {
        self.userID = userID
        self.createdAt = createdAt
        self.read = read
    }

    public static func == (lhs: Member, rhs: Member) -> Bool {
        lhs.userID == rhs.userID && lhs.createdAt == rhs.createdAt && lhs.read == rhs.read
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(userID)
        hasher.combine(createdAt)
        hasher.combine(read)
    }
}
