/// Which sequence of the journal a command is numbered in: the shard of its channels when they are
/// all of one shard (what that shard's owner commits), and the cluster stream for everything else
/// (users, channel types, commands over several shards). Each stream's entries are numbered 1, 2,
/// 3, ... without gaps, so that a node can follow every stream on its own, whoever commits it.
public struct JournalStream: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// `0 ..< ShardMap.shardCount` for a shard's stream, ``ShardMap/shardCount`` for the cluster's.
    public let rawValue: Int

    /// Every stream: one per shard, then the cluster's.
    public static let count = ShardMap.shardCount + 1
    public static let cluster = JournalStream(uncheckedRawValue: ShardMap.shardCount)

    public init(_ shard: ShardID) {
        rawValue = shard.rawValue
    }

    /// The stream numbered `rawValue` as stored; nil for a number that names none.
    public init?(rawValue: Int) {
        guard (0..<Self.count).contains(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    private init(uncheckedRawValue: Int) {
        rawValue = uncheckedRawValue
    }

    public static func < (lhs: JournalStream, rhs: JournalStream) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { rawValue == ShardMap.shardCount ? "the cluster stream" : "the stream of shard \(rawValue)" }
}
