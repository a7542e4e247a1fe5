/// The moment a member's pointer first reached past a position in the channel's message list.
/// A member's passes form a high-water history: positions and times both strictly increase.
public struct PointerPass: Sendable, Hashable {
    /// Messages `0..<position` were passed.
    public var position: Int
    public var at: Timestamp

    public init(position: Int, at: Timestamp) {
        self.position = position
        self.at = at
    }
}
