/// One of the cluster's shards: every channel belongs to exactly one (``ShardMap``), and one node at a
/// time owns each, under a lease whose epoch fences its commits.
public struct ShardID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The shard's number, `0 ..< ShardMap.shardCount`.
    public let rawValue: Int

    public init(_ rawValue: Int) {
        self.rawValue = rawValue
    }

    public static func < (lhs: ShardID, rhs: ShardID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "shard \(rawValue)" }
}
