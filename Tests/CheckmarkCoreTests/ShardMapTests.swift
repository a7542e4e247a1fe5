import Testing

@testable import CheckmarkCore

@Suite("Channels map to shards by jump_hash(fnv1a64(cid), 256)")
struct ShardMapTests {
    @Test func fnv1a64MatchesThePublishedVectors() {
        #expect(ShardMap.fnv1a64("".utf8) == 0xcbf2_9ce4_8422_2325)
        #expect(ShardMap.fnv1a64("a".utf8) == 0xaf63_dc4c_8601_ec8c)
        #expect(ShardMap.fnv1a64("foobar".utf8) == 0x8594_4171_f739_67e8)
    }

    @Test func jumpHashMatchesThePapersReferenceImplementation() {
        #expect(ShardMap.jumpHash(256, buckets: 1024) == 520)
        #expect(ShardMap.jumpHash(0, buckets: 60) == 0)
        #expect(ShardMap.jumpHash(1, buckets: 60) == 55)
        #expect(ShardMap.jumpHash(2, buckets: 60) == 46)
        #expect(ShardMap.jumpHash(42, buckets: 57) == 43)
        #expect(ShardMap.jumpHash(0xDEAD_10CC, buckets: 666) == 361)
        #expect(ShardMap.jumpHash(0xDEAD_10CC, buckets: 1) == 0)
    }

    @Test func aChannelsShardIsTheHashOfItsTypeColonID() {
        // Worked out apart from this code, from the two algorithms' definitions.
        #expect(ShardMap.shard(of: ChannelCID(type: "messaging", id: "general")) == ShardID(92))
        #expect(ShardMap.shard(of: ChannelCID(type: "messaging", id: "a")) == ShardID(66))
        #expect(ShardMap.shard(of: ChannelCID(type: "team", id: "x-1")) == ShardID(20))
        #expect(ShardMap.shard(of: ChannelCID(type: "team", id: "x-1"))
            == ShardID(ShardMap.jumpHash(ShardMap.fnv1a64("team:x-1".utf8), buckets: 256)))
    }

    @Test func channelsSpreadEvenlyOverTheShards() {
        var counts = [Int](repeating: 0, count: ShardMap.shardCount)
        for index in 0..<25_600 { counts[ShardMap.shard(of: ChannelCID(type: "messaging", id: "c\(index)")).rawValue] += 1 }
        // 100 expected per shard; a binomial spread keeps every shard well within 50-150.
        #expect(counts.min()! > 50)
        #expect(counts.max()! < 150)
    }

    @Test func moreBucketsMoveOnlyTheKeysTheyMust() {
        // Jump hash's defining property: going from n to n+1 buckets, a key either stays or moves to
        // the new bucket.
        for key in (0..<2_000).map({ ShardMap.fnv1a64("k\($0)".utf8) }) {
            let before = ShardMap.jumpHash(key, buckets: 255)
            let after = ShardMap.jumpHash(key, buckets: 256)
            #expect(after == before || after == 255)
        }
    }
}
