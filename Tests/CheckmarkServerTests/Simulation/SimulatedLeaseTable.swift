import CheckmarkCore
import CheckmarkStorage

/// The shard table and its round statement (``PostgresShardLeases/roundSQL``) as a value, with the
/// database's clock as an argument: what the simulation runs nodes against. Times are milliseconds.
struct SimulatedLeaseTable {
    struct Row: Equatable {
        var owner: String?
        var epoch: Int64 = 0
        var expiresAt = 0
    }

    let leaseMS: Int
    private(set) var rows: [Row]
    /// Each node's last round, and whether its database session is open.
    private var seenAt: [String: Int] = [:]
    private var sessions: Set<String> = []

    init(shards: Int, leaseMS: Int) {
        self.leaseMS = leaseMS
        rows = Array(repeating: Row(), count: shards)
    }

    /// The node's process ended: its session closes.
    mutating func endSession(of node: String) {
        sessions.remove(node)
    }

    /// One round, as the statement does it: every part sees the rows as they were when it began.
    mutating func round(_ round: ShardLeaseRound, node: String, at now: Int) -> ShardLeaseRoundResult {
        sessions.insert(node)
        let before = rows
        let others = Set(seenAt.filter { $0.key != node && $0.value > now - leaseMS && sessions.contains($0.key) }.keys)
        seenAt[node] = now
        var result = ShardLeaseRoundResult(liveNodes: others.count + 1)
        for (shard, epoch) in round.renew where before[shard.rawValue].owner == node && before[shard.rawValue].epoch == epoch {
            rows[shard.rawValue].expiresAt = now + leaseMS
            result.renewed.insert(shard)
        }
        for (shard, epoch) in round.release where before[shard.rawValue].owner == node && before[shard.rawValue].epoch == epoch {
            rows[shard.rawValue].owner = nil
            rows[shard.rawValue].expiresAt = 0
        }
        var claimable = 0
        for (index, row) in before.enumerated() where claimable < round.claim {
            let shard = ShardID(index)
            guard round.renew[shard] == nil, round.release[shard] == nil else { continue }
            let free = row.owner == nil || row.owner == node || row.expiresAt <= now || !others.contains(row.owner!)
            guard free else { continue }
            claimable += 1
            rows[index] = Row(owner: node, epoch: row.epoch + 1, expiresAt: now + leaseMS)
            result.claimed[shard] = row.epoch + 1
        }
        for (index, row) in before.enumerated() {
            if let owner = row.owner, others.contains(owner), row.expiresAt > now { result.owners[ShardID(index)] = owner }
        }
        return result
    }

    /// Whether a commit by `node` of `shard` at `epoch` passes the fence now.
    func admits(_ node: String, _ shard: ShardID, epoch: Int64) -> Bool {
        rows[shard.rawValue].owner == node && rows[shard.rawValue].epoch == epoch
    }
}
