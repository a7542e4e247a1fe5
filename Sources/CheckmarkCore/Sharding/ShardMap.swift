/// Which shard a channel belongs to: `jump_hash(fnv1a64(cid), 256)`, stable across nodes, releases and
/// platforms (no seeded hashing). Jump consistent hashing (Lamping and Veach, 2014) moves only the
/// channels it must if the shard count ever changes; FNV-1a turns the cid's UTF-8 bytes into its key.
public enum ShardMap {
    /// The number of shards. Changing it moves channels between shards: it is part of the stored
    /// format, as a migration would be.
    public static let shardCount = 256

    /// Every shard, in order.
    public static var allShards: [ShardID] { (0..<shardCount).map(ShardID.init) }

    /// The shard of `cid`.
    public static func shard(of cid: ChannelCID) -> ShardID {
        var hash = fnv1a64Basis
        hash = fnv1a64(cid.type.utf8, continuing: hash)
        hash = fnv1a64(CollectionOfOne(UInt8(ascii: ":")), continuing: hash)
        hash = fnv1a64(cid.id.utf8, continuing: hash)
        return ShardID(jumpHash(hash, buckets: shardCount))
    }

    static let fnv1a64Basis: UInt64 = 0xcbf2_9ce4_8422_2325
    static let fnv1a64Prime: UInt64 = 0x0000_0100_0000_01b3

    /// FNV-1a, 64 bits, of `bytes`, going on from `hash` (the offset basis for a fresh hash).
    static func fnv1a64(_ bytes: some Sequence<UInt8>, continuing hash: UInt64 = fnv1a64Basis) -> UInt64 {
        var hash = hash
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* fnv1a64Prime
        }
        return hash
    }

    /// Jump consistent hash: the bucket of `key` among `buckets` (at least 1).
    static func jumpHash(_ key: UInt64, buckets: Int) -> Int {
        precondition(buckets > 0, "jump hash needs at least one bucket")
        var key = key
        var bucket: Int64 = -1
        var next: Int64 = 0
        while next < Int64(buckets) {
            bucket = next
            key = key &* 2_862_933_555_777_941_757 &+ 1
            next = Int64(Double(bucket + 1) * (Double(Int64(1) << 31) / Double((key >> 33) + 1)))
        }
        return Int(bucket)
    }
}
