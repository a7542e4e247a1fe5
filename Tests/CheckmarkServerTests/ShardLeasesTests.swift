import CheckmarkCore
import CheckmarkStorage
import Testing

@testable import CheckmarkServer

/// Transcripts of a node's shard leases: inputs, then the actions returned, written as short strings.
/// Shard sets print as ranges (`0-127`), rounds as `round(renew:R release:L claim:N)`.
private func ranges(_ shards: some Sequence<ShardID>) -> String {
    let sorted = shards.map(\.rawValue).sorted()
    guard !sorted.isEmpty else { return "-" }
    var parts: [String] = []
    var start = sorted[0]
    var last = sorted[0]
    for value in sorted.dropFirst() {
        if value == last + 1 {
            last = value
            continue
        }
        parts.append(start == last ? "\(start)" : "\(start)-\(last)")
        (start, last) = (value, value)
    }
    parts.append(start == last ? "\(start)" : "\(start)-\(last)")
    return parts.joined(separator: ",")
}

private func transcript(_ actions: [ShardLeases.Action]) -> [String] {
    actions.map { action in
        switch action {
        case .round(let round): "round(renew:\(ranges(round.renew.keys)) release:\(ranges(round.release.keys)) claim:\(round.claim))"
        case .acquired(let shards): "acquired(\(ranges(shards.keys)))"
        case .drain(let shards): "drain(\(ranges(shards)))"
        case .lost(let shards): "lost(\(ranges(shards)))"
        case .stopped: "stopped"
        }
    }
}

private func shards(_ range: ClosedRange<Int>, epoch: Int64 = 1) -> [ShardID: Int64] {
    Dictionary(uniqueKeysWithValues: range.map { (ShardID($0), epoch) })
}

private func ms(_ value: Int) -> Duration { .milliseconds(value) }

/// A node that took every shard at 0 ms, alone.
private func aloneWithEveryShard() -> ShardLeases {
    var leases = ShardLeases()
    _ = leases.tick(at: ms(0))
    _ = leases.roundSucceeded(ShardLeaseRoundResult(claimed: shards(0...255), liveNodes: 1), at: ms(10))
    return leases
}

@Suite("Shard leases: a node claims an even share, renews it, and hands over the excess")
struct ShardLeaseShareTests {
    @Test func aNodeAloneClaimsEveryShard() {
        var leases = ShardLeases()
        #expect(transcript(leases.tick(at: ms(0))) == ["round(renew:- release:- claim:256)"])
        #expect(transcript(leases.roundSucceeded(ShardLeaseRoundResult(claimed: shards(0...255), liveNodes: 1), at: ms(10)))
            == ["acquired(0-255)"])
        #expect(leases.serving.count == 256)
    }

    @Test func oneRoundAtATimeEveryRenewIntervalRenewingEveryLeaseHeld() {
        var leases = ShardLeases()
        _ = leases.tick(at: ms(0))
        #expect(leases.tick(at: ms(1_500)).isEmpty, "a round is in flight")
        _ = leases.roundSucceeded(ShardLeaseRoundResult(claimed: shards(0...255), liveNodes: 1), at: ms(1_600))
        #expect(transcript(leases.tick(at: ms(1_600))) == ["round(renew:0-255 release:- claim:0)"])
        _ = leases.roundSucceeded(ShardLeaseRoundResult(renewed: Set(ShardMap.allShards), liveNodes: 1), at: ms(1_700))
        #expect(leases.tick(at: ms(2_500)).isEmpty)
        #expect(transcript(leases.tick(at: ms(2_600))) == ["round(renew:0-255 release:- claim:0)"])
    }

    @Test func aSecondNodeMakesTheFirstDrainItsHighestShardsAndReleaseThemOnceDrained() {
        var leases = aloneWithEveryShard()
        _ = leases.tick(at: ms(1_000))
        #expect(transcript(leases.roundSucceeded(ShardLeaseRoundResult(renewed: Set(ShardMap.allShards), liveNodes: 2), at: ms(1_010)))
            == ["drain(128-255)"])
        #expect(leases.serving == Set((0...127).map(ShardID.init)))
        #expect(transcript(leases.tick(at: ms(2_000))) == ["round(renew:0-255 release:- claim:0)"], "draining shards are renewed")
        _ = leases.roundSucceeded(ShardLeaseRoundResult(renewed: Set(ShardMap.allShards), liveNodes: 2), at: ms(2_010))
        #expect(leases.drained((128...255).map(ShardID.init)).isEmpty)
        #expect(transcript(leases.tick(at: ms(2_100))) == ["round(renew:0-127 release:128-255 claim:0)"], "released at the next tick")
        #expect(leases.roundSucceeded(ShardLeaseRoundResult(renewed: Set((0...127).map(ShardID.init)), liveNodes: 2), at: ms(2_110)).isEmpty)
        #expect(leases.owned.count == 128)
        #expect(leases.draining.isEmpty)
    }

    @Test func aNodeClaimsNothingWhileItDrains() {
        var leases = aloneWithEveryShard()
        _ = leases.tick(at: ms(1_000))
        _ = leases.roundSucceeded(ShardLeaseRoundResult(renewed: Set(ShardMap.allShards), liveNodes: 3), at: ms(1_010))
        #expect(leases.draining.count == 256 - 86, "an even share of 256 over 3 nodes is 86")
        _ = leases.drained((86...200).map(ShardID.init))
        #expect(transcript(leases.tick(at: ms(1_100))) == ["round(renew:0-85,201-255 release:86-200 claim:0)"])
    }

    @Test func aJoiningNodeClaimsUpToItsShareAndNoMore() {
        var leases = ShardLeases()
        _ = leases.tick(at: ms(0))
        // The first round cannot know the others: it asks for everything and gets what is free.
        #expect(transcript(leases.roundSucceeded(ShardLeaseRoundResult(claimed: shards(0...9), liveNodes: 4), at: ms(10)))
            == ["acquired(0-9)"])
        #expect(transcript(leases.tick(at: ms(1_000))) == ["round(renew:0-9 release:- claim:54)"])
        #expect(transcript(leases.roundSucceeded(ShardLeaseRoundResult(renewed: Set((0...9).map(ShardID.init)), claimed: shards(100...153, epoch: 7), liveNodes: 4), at: ms(1_010)))
            == ["acquired(100-153)"])
        #expect(leases.owned[ShardID(100)] == 7)
        #expect(transcript(leases.tick(at: ms(2_000))) == ["round(renew:0-9,100-153 release:- claim:0)"])
    }

    @Test func theOtherNodesShardsAreWhereTheLastRoundSaid() {
        var leases = ShardLeases()
        _ = leases.tick(at: ms(0))
        _ = leases.roundSucceeded(ShardLeaseRoundResult(claimed: shards(0...127), liveNodes: 2, owners: [ShardID(200): "b"]), at: ms(10))
        #expect(leases.owners == [ShardID(200): "b"])
        _ = leases.tick(at: ms(1_000))
        _ = leases.roundSucceeded(ShardLeaseRoundResult(renewed: Set((0...127).map(ShardID.init)), liveNodes: 2, owners: [ShardID(201): "c"]), at: ms(1_010))
        #expect(leases.owners == [ShardID(201): "c"])
    }

    @Test func aDeadNodesShareIsClaimedOnceTheLiveCountDrops() {
        var leases = ShardLeases()
        _ = leases.tick(at: ms(0))
        _ = leases.roundSucceeded(ShardLeaseRoundResult(claimed: shards(0...127), liveNodes: 2), at: ms(10))
        _ = leases.tick(at: ms(1_000))
        _ = leases.roundSucceeded(ShardLeaseRoundResult(renewed: Set((0...127).map(ShardID.init)), liveNodes: 1), at: ms(1_010))
        #expect(transcript(leases.tick(at: ms(2_000))) == ["round(renew:0-127 release:- claim:128)"])
    }
}

@Suite("Shard leases: a lease this node cannot vouch for is lost")
struct ShardLeaseLossTests {
    @Test func aRenewalTheTableRefusedLosesThatShard() {
        var leases = aloneWithEveryShard()
        _ = leases.tick(at: ms(1_000))
        let kept = Set(ShardMap.allShards).subtracting([ShardID(3), ShardID(4)])
        #expect(transcript(leases.roundSucceeded(ShardLeaseRoundResult(renewed: kept, liveNodes: 1), at: ms(1_010))) == ["lost(3-4)"])
        #expect(leases.owned[ShardID(3)] == nil)
    }

    @Test func aFencedCommitLosesItsShardsAndALateRenewalDoesNotBringThemBack() {
        var leases = aloneWithEveryShard()
        _ = leases.tick(at: ms(1_000))
        #expect(transcript(leases.fenced([ShardID(7)])) == ["lost(7)"])
        #expect(leases.roundSucceeded(ShardLeaseRoundResult(renewed: Set(ShardMap.allShards), liveNodes: 1), at: ms(1_010)).isEmpty)
        #expect(leases.owned[ShardID(7)] == nil)
        #expect(transcript(leases.tick(at: ms(2_000))) == ["round(renew:0-6,8-255 release:- claim:1)"],
                "claimed afresh, at a new epoch")
    }

    @Test func failedRoundsChangeNothingUntilTheLeaseRunsOutCountedFromTheLastGoodRoundsStart() {
        var leases = aloneWithEveryShard()
        // Claimed in the round that started at 0 ms: valid until 5,000 ms.
        for second in 1...4 {
            #expect(transcript(leases.tick(at: ms(second * 1_000))) == ["round(renew:0-255 release:- claim:0)"])
            #expect(leases.roundFailed(at: ms(second * 1_000 + 900)).isEmpty)
        }
        #expect(transcript(leases.tick(at: ms(5_000))) == ["lost(0-255)", "round(renew:- release:- claim:256)"])
        #expect(leases.owned.isEmpty)
    }

    @Test func aRoundThatSucceedsKeepsLeasesValidFromItsStartNotItsEnd() {
        var leases = aloneWithEveryShard()
        _ = leases.tick(at: ms(1_000))
        // The database answered 3 s later: its renewal holds until 6,000 ms at the latest.
        #expect(leases.roundSucceeded(ShardLeaseRoundResult(renewed: Set(ShardMap.allShards), liveNodes: 1), at: ms(4_000)).isEmpty)
        _ = leases.tick(at: ms(4_000))
        _ = leases.roundFailed(at: ms(5_000))
        #expect(transcript(leases.tick(at: ms(5_999))) == ["round(renew:0-255 release:- claim:0)"])
        #expect(transcript(leases.roundFailed(at: ms(6_000))) == ["lost(0-255)"])
    }
}

@Suite("Shard leases: a stopping node hands its shards over")
struct ShardLeaseStopTests {
    @Test func stopDrainsEveryShardReleasesThemInOneRoundThenStops() {
        var leases = aloneWithEveryShard()
        #expect(transcript(leases.stop()) == ["drain(0-255)"])
        _ = leases.drained(ShardMap.allShards)
        #expect(transcript(leases.tick(at: ms(100))) == ["round(renew:- release:0-255 claim:0)"])
        #expect(transcript(leases.roundSucceeded(ShardLeaseRoundResult(liveNodes: 2), at: ms(110))) == ["stopped"])
        #expect(leases.tick(at: ms(5_000)).isEmpty)
    }

    @Test func aStoppingNodeWhoseLastRoundFailsLetsItsLeasesRunOut() {
        var leases = aloneWithEveryShard()
        _ = leases.stop()
        _ = leases.drained(ShardMap.allShards)
        _ = leases.tick(at: ms(100))
        #expect(transcript(leases.roundFailed(at: ms(200))) == ["lost(0-255)", "stopped"])
    }

    @Test func aStoppingNodeGivesBackWhatARoundInFlightClaimed() {
        var fresh = ShardLeases()
        _ = fresh.tick(at: ms(0))
        #expect(fresh.stop().isEmpty, "the round in flight may claim shards")
        #expect(transcript(fresh.roundSucceeded(ShardLeaseRoundResult(claimed: shards(0...3), liveNodes: 1), at: ms(10)))
            == ["round(renew:- release:0-3 claim:0)"])
        #expect(transcript(fresh.roundSucceeded(ShardLeaseRoundResult(liveNodes: 1), at: ms(20))) == ["stopped"])
    }

    @Test func aNodeWithNothingStopsAtOnce() {
        var leases = ShardLeases()
        #expect(transcript(leases.stop()) == ["stopped"])
    }
}
