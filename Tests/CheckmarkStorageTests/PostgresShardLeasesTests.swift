import CheckmarkCore
@testable import CheckmarkStorage
import Foundation
import Logging
import Synchronization
import Testing

/// Issue 45: the shard table hands each shard to one node at a time, at an epoch one past the last
/// owner's, by the database's clock; a node whose session ends is passed over at once.
@Suite("PostgreSQL shard leases", .enabled(if: StoreKind.postgresURL != nil))
struct PostgresShardLeasesTests {
    /// A migrated schema of its own, and a lease store for each of `nodes` on it.
    private static func withLeases(_ nodes: Int, _ body: ([PostgresShardLeases], PostgresLocation) throws -> Void) throws {
        let location = try StoreKind.postgres.makeLocation()
        defer { location.remove() }
        guard case .postgres(let postgres) = location else { return }
        try PostgresStore(location: postgres, logger: Logger(label: "test")).close()
        let stores = (0..<nodes).map { _ in PostgresShardLeases(location: postgres, logger: Logger(label: "test")) }
        defer { for store in stores { store.close() } }
        try body(stores, postgres)
    }

    private static func all(epoch: Int64) -> [ShardID: Int64] {
        Dictionary(uniqueKeysWithValues: ShardMap.allShards.map { ($0, epoch) })
    }

    @Test func aNodeAloneClaimsEveryShardAtEpochOne() throws {
        try Self.withLeases(1) { stores, _ in
            let result = try stores[0].leaseRound(ShardLeaseRound(claim: 256), node: "a", leaseSeconds: 5)
            #expect(result.claimed == Self.all(epoch: 1))
            #expect(result.liveNodes == 1)
            let again = try stores[0].leaseRound(ShardLeaseRound(renew: Self.all(epoch: 1), claim: 10), node: "a", leaseSeconds: 5)
            #expect(again.renewed == Set(ShardMap.allShards))
            #expect(again.claimed.isEmpty, "nothing is free")
        }
    }

    @Test func aRenewalAtAStaleEpochHoldsNothing() throws {
        try Self.withLeases(1) { stores, _ in
            _ = try stores[0].leaseRound(ShardLeaseRound(claim: 256), node: "a", leaseSeconds: 5)
            let stale = try stores[0].leaseRound(ShardLeaseRound(renew: [ShardID(0): 0, ShardID(1): 1]), node: "a", leaseSeconds: 5)
            #expect(stale.renewed == [ShardID(1)])
        }
    }

    @Test func aLiveNodesUnexpiredShardsAreNeverClaimed() throws {
        try Self.withLeases(2) { stores, _ in
            _ = try stores[0].leaseRound(ShardLeaseRound(claim: 200), node: "a", leaseSeconds: 5)
            let second = try stores[1].leaseRound(ShardLeaseRound(claim: 256), node: "b", leaseSeconds: 5)
            #expect(second.claimed.count == 56)
            #expect(second.liveNodes == 2)
            #expect(second.owners == Dictionary(uniqueKeysWithValues: (0..<200).map { (ShardID($0), "a") }), "the others' shards, as the round began")
        }
    }

    @Test func aReleasedShardIsFreeForAnyNodeAtTheNextEpoch() throws {
        try Self.withLeases(2) { stores, _ in
            _ = try stores[0].leaseRound(ShardLeaseRound(claim: 256), node: "a", leaseSeconds: 5)
            _ = try stores[0].leaseRound(ShardLeaseRound(release: [ShardID(5): 1, ShardID(6): 1]), node: "a", leaseSeconds: 5)
            let second = try stores[1].leaseRound(ShardLeaseRound(claim: 256), node: "b", leaseSeconds: 5)
            #expect(second.claimed == [ShardID(5): 2, ShardID(6): 2])
        }
    }

    /// A node whose session ended is dead once its last round is two renew intervals old (2 s at a
    /// 5 s lease: time for a live node to reconnect its session), not when its leases run out.
    @Test func aNodeWhoseSessionEndedIsPassedOverWithoutWaitingForItsLeases() throws {
        try Self.withLeases(2) { stores, _ in
            _ = try stores[0].leaseRound(ShardLeaseRound(claim: 128), node: "a", leaseSeconds: 60)
            _ = try stores[1].leaseRound(ShardLeaseRound(claim: 128), node: "b", leaseSeconds: 5)
            #expect(try stores[1].leaseRound(ShardLeaseRound(), node: "b", leaseSeconds: 5).owners.count == 128)
            let closed = ContinuousClock.now
            stores[0].close()
            // A dead node's shards are no longer said to be its (nothing is sent to it).
            var listed = 128
            for _ in 0..<100 where listed > 0 {
                listed = try stores[1].leaseRound(ShardLeaseRound(), node: "b", leaseSeconds: 5).owners.count
                if listed > 0 { Thread.sleep(forTimeInterval: 0.05) }
            }
            #expect(listed == 0)
            #expect(ContinuousClock.now - closed > .milliseconds(1_500), "not before its grace")
            var taken: [ShardID: Int64] = [:]
            var live = 0
            for _ in 0..<50 where taken.count < 128 {
                let round = try stores[1].leaseRound(ShardLeaseRound(claim: 128 - taken.count), node: "b", leaseSeconds: 5)
                taken.merge(round.claimed) { $1 }
                live = round.liveNodes
                if taken.count < 128 { Thread.sleep(forTimeInterval: 0.05) }
            }
            #expect(taken.count == 128)
            #expect(Set(taken.values) == [2])
            #expect(live == 1)
            #expect(ContinuousClock.now - closed < .seconds(10), "the leases had a minute to run")
        }
    }

    @Test func anExpiredLeaseIsTakenAtANewEpochAndItsHolderCannotRenewIt() throws {
        try Self.withLeases(2) { stores, _ in
            _ = try stores[0].leaseRound(ShardLeaseRound(claim: 256), node: "a", leaseSeconds: 0.3)
            Thread.sleep(forTimeInterval: 0.5)
            // The holder is still connected (a paused process): only the expiry frees its shards.
            let second = try stores[1].leaseRound(ShardLeaseRound(claim: 256), node: "b", leaseSeconds: 5)
            #expect(second.claimed == Self.all(epoch: 2))
            let late = try stores[0].leaseRound(ShardLeaseRound(renew: Self.all(epoch: 1)), node: "a", leaseSeconds: 0.3)
            #expect(late.renewed.isEmpty)
        }
    }

    /// Nodes claiming at once may take a shard from one another (a node that started in the same
    /// moment is not yet live in the other's snapshot): safe, since each claim is at a new epoch
    /// and the old one is fenced. What must never happen is one epoch of a shard handed to two.
    @Test func nodesClaimingAtOnceNeverGetTheSameEpochOfAShard() throws {
        try Self.withLeases(4) { stores, _ in
            let claims = Mutex<[(node: Int, shard: ShardID, epoch: Int64)]>([])
            let held = Mutex<[Int: [ShardID: Int64]]>([:])
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                do {
                    var mine: [ShardID: Int64] = [:]
                    for _ in 0..<5 {
                        let round = try stores[index].leaseRound(ShardLeaseRound(renew: mine, claim: 256), node: "n\(index)", leaseSeconds: 5)
                        mine = mine.filter { round.renewed.contains($0.key) }.merging(round.claimed) { $1 }
                        claims.withLock { list in list += round.claimed.map { (index, $0.key, $0.value) } }
                    }
                    held.withLock { $0[index] = mine }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty)
            let all = claims.withLock { $0 }
            let epochs = Set(all.map { "\($0.shard.rawValue)@\($0.epoch)" })
            #expect(epochs.count == all.count, "an epoch of a shard was claimed twice")
            // Then one renewal each, in turn: what each still holds is the table's, one owner a shard.
            var final: [Set<ShardID>] = []
            for (index, mine) in held.withLock({ $0 }) {
                final.append(try stores[index].leaseRound(ShardLeaseRound(renew: mine), node: "n\(index)", leaseSeconds: 5).renewed)
            }
            #expect(final.map(\.count).reduce(0, +) == 256)
            #expect(final.reduce(into: Set<ShardID>()) { $0.formUnion($1) }.count == 256)
        }
    }
}
