import CheckmarkCore
import CheckmarkStorage

@testable import CheckmarkServer

/// Nodes running ``ShardLeases`` against a ``SimulatedLeaseTable``, driven by one seed: rounds and
/// commits with latency, rounds that fail, pauses (SIGSTOP: a paused node's requests in flight land
/// late), kills and new nodes; then a quiet time. Each node commits to shards it serves, with the
/// epoch it holds; the table admits a commit only through the fence (unless `fence` is false: the
/// bug the simulation must find). Times are milliseconds of one clock, the database's and the nodes'.
struct LeaseSimulation {
    struct Node {
        var id: String
        var leases: ShardLeases
        var alive = true
        var pausedUntil = 0
        /// The round in flight: when the database runs it, its result, and when the answer arrives.
        var round: (request: ShardLeaseRound, runsAt: Int, answersAt: Int, failed: Bool, result: ShardLeaseRoundResult?)?
        /// Commits in flight: when the database gets each, and how it ended (learnt when not paused).
        var commits: [(shard: ShardID, epoch: Int64, at: Int)] = []
        var refusedCommits: [ShardID] = []
        var drains: [(shards: [ShardID], at: Int)] = []
    }

    static let shards = 32
    static let settings = ShardLeases.Settings(shardCount: shards, leaseDuration: .milliseconds(5_000), renewInterval: .milliseconds(1_000))

    var rng: SplitMix64
    let fence: Bool
    var now = 0
    var table = SimulatedLeaseTable(shards: shards, leaseMS: 5_000)
    var nodes: [Node] = []
    private var started = 0
    /// Per shard, the last commit the table took: its epoch and node.
    private var lastCommit: [ShardID: (epoch: Int64, node: String)] = [:]
    private(set) var violations: [String] = []
    private(set) var commitsTaken = 0
    private(set) var commitsFenced = 0

    init(seed: UInt64, fence: Bool = true) {
        rng = SplitMix64(seed: seed)
        self.fence = fence
        for _ in 0..<3 { startNode() }
    }

    private mutating func startNode() {
        started += 1
        nodes.append(Node(id: "n\(started)", leases: ShardLeases(settings: Self.settings)))
    }

    private mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < probability }
    private mutating func between(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

    /// Runs `steps` steps with faults, then `quietSteps` without.
    mutating func run(steps: Int, quietSteps: Int) {
        for step in 0..<(steps + quietSteps) {
            now += between(5...60)
            if step < steps { injectFault() }
            for index in nodes.indices where nodes[index].alive { advance(index) }
        }
    }

    private mutating func injectFault() {
        let alive = nodes.indices.filter { nodes[$0].alive }
        if chance(0.004), let victim = alive.randomElement(using: &rng) {
            // A pause (SIGSTOP, a stall): what it had in flight reaches the database late.
            let length = between(100...8_000)
            nodes[victim].pausedUntil = max(nodes[victim].pausedUntil, now + length)
            for commit in nodes[victim].commits.indices where nodes[victim].commits[commit].at > now {
                nodes[victim].commits[commit].at += length
            }
        }
        if chance(0.0015), alive.count > 1, let victim = alive.randomElement(using: &rng) {
            nodes[victim].alive = false
            table.endSession(of: nodes[victim].id)
        }
        if chance(0.0015), alive.count < 4 { startNode() }
    }

    private mutating func advance(_ index: Int) {
        // The database side goes on while the node is paused.
        if var round = nodes[index].round, round.result == nil, round.runsAt <= now {
            round.result = table.round(round.request, node: nodes[index].id, at: round.runsAt)
            nodes[index].round = round
        }
        var inFlight: [(shard: ShardID, epoch: Int64, at: Int)] = []
        for commit in nodes[index].commits {
            guard commit.at <= now else {
                inFlight.append(commit)
                continue
            }
            if !land(commit, of: nodes[index].id) { nodes[index].refusedCommits.append(commit.shard) }
        }
        nodes[index].commits = inFlight
        guard now >= nodes[index].pausedUntil else { return }
        var actions: [ShardLeases.Action] = []
        if let round = nodes[index].round, round.answersAt <= now {
            nodes[index].round = nil
            if !round.failed, let result = round.result {
                actions += nodes[index].leases.roundSucceeded(result, at: .milliseconds(now))
            } else {
                actions += nodes[index].leases.roundFailed(at: .milliseconds(now))
            }
        }
        if !nodes[index].refusedCommits.isEmpty {
            actions += nodes[index].leases.fenced(nodes[index].refusedCommits)
            nodes[index].refusedCommits = []
        }
        let due = nodes[index].drains.filter { $0.at <= now }
        nodes[index].drains.removeAll { $0.at <= now }
        for drain in due { actions += nodes[index].leases.drained(drain.shards) }
        actions += nodes[index].leases.tick(at: .milliseconds(now))
        perform(actions, at: index)
        // A commit as owner of a shard served now, with the epoch held.
        if chance(0.5), let shard = nodes[index].leases.serving.randomElement(using: &rng), let epoch = nodes[index].leases.owned[shard] {
            nodes[index].commits.append((shard, epoch, now + between(1...30)))
        }
    }

    private mutating func perform(_ actions: [ShardLeases.Action], at index: Int) {
        for action in actions {
            switch action {
            case .round(let request):
                let answersAt = now + between(1...120)
                // A failed round's statement may have run (its answer lost) or not.
                let failed = chance(0.05)
                let runs = !failed || chance(0.5)
                nodes[index].round = (request, runs ? between(now...answersAt) : .max, answersAt, failed, nil)
            case .drain(let shards):
                // Drained once the commits in flight for them have landed.
                let last = nodes[index].commits.filter { shards.contains($0.shard) }.map(\.at).max() ?? now
                nodes[index].drains.append((shards, max(now, last) + 1))
            case .acquired, .lost, .stopped:
                break
            }
        }
    }

    /// The database takes a commit (true), or refuses it through the fence.
    private mutating func land(_ commit: (shard: ShardID, epoch: Int64, at: Int), of node: String) -> Bool {
        guard !fence || table.admits(node, commit.shard, epoch: commit.epoch) else {
            commitsFenced += 1
            return false
        }
        if let last = lastCommit[commit.shard], commit.epoch < last.epoch || (commit.epoch == last.epoch && last.node != node) {
            violations.append("at \(commit.at) ms \(node) committed \(commit.shard) at epoch \(commit.epoch) after \(last.node) at epoch \(last.epoch)")
        }
        lastCommit[commit.shard] = (commit.epoch, node)
        commitsTaken += 1
        return true
    }

    /// After a quiet time: every shard held by one live node, as the table says, and evenly.
    func quiescentProblems() -> [String] {
        var problems: [String] = []
        let alive = nodes.filter(\.alive)
        var served: [ShardID: String] = [:]
        for node in alive {
            for shard in node.leases.serving {
                if let other = served[shard] { problems.append("\(shard) served by \(other) and \(node.id)") }
                served[shard] = node.id
            }
            let inTable = Dictionary(uniqueKeysWithValues: table.rows.enumerated().filter { $0.element.owner == node.id }
                .map { (ShardID($0.offset), $0.element.epoch) })
            if inTable != node.leases.owned { problems.append("\(node.id) holds \(node.leases.owned.count) shards, the table says \(inTable.count)") }
            let share = (Self.shards + alive.count - 1) / alive.count
            if node.leases.owned.count > share { problems.append("\(node.id) holds \(node.leases.owned.count), more than its share \(share)") }
        }
        if served.count != Self.shards { problems.append("\(Self.shards - served.count) shards served by nobody") }
        return problems
    }
}
