import CheckmarkCore
import CheckmarkStorage
import CoreMetrics
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Runs a node's ``ShardLeases`` against the shared lease table: ticks it on the engine loop every
/// ``tickInterval``, performs its rounds on a thread of their own (never behind a commit), and
/// reports what it owns (`checkmark_shards_owned`) and loses (`checkmark_shard_leases_lost_total`,
/// one warning per loss). Created, started and stopped on the engine loop.
///
/// A shard's commands are applied by its owner (``CommandRoute``) and its commits are fenced by the
/// epoch it holds the shard at. Every node still commits under the journal's append lock.
final class ShardLeaseDriver: Sendable {
    static let tickInterval = TimeAmount.milliseconds(100)

    private let store: any ShardLeaseStore
    private let nodeID: String
    private let engineLoop: any EventLoop
    private let rounds: NIOThreadPool
    private let metrics: ServiceMetrics
    private let logger: Logger
    private let state: NIOLoopBoundBox<State>
    /// Readings of this monotonic clock are what the machine's times are.
    private let origin = NIODeadline.now()

    private final class State {
        var leases: ShardLeases
        var ticker: RepeatedTask?
        /// Asked to drain shards: calls its second argument once nothing of them is being committed.
        var drain: ([ShardID], @escaping () -> Void) -> Void = { _, done in done() }
        var stopped: [EventLoopPromise<Void>] = []
        var hasStopped = false
        /// Rounds failed in a row: the first is logged as a warning, the rest at debug level.
        var failedRounds = 0
        init(settings: ShardLeases.Settings) { leases = ShardLeases(settings: settings) }
    }

    init(store: any ShardLeaseStore, nodeID: String, settings: ShardLeases.Settings = ShardLeases.Settings(), engineLoop: any EventLoop,
         metrics: ServiceMetrics, logger: Logger) {
        self.store = store
        self.nodeID = nodeID
        self.engineLoop = engineLoop
        self.metrics = metrics
        self.logger = logger
        rounds = NIOThreadPool(numberOfThreads: 1)
        rounds.start()
        state = NIOLoopBoundBox(State(settings: settings), eventLoop: engineLoop)
    }

    /// The shards this node serves now (held, not draining).
    var serving: Set<ShardID> { state.value.leases.serving }

    /// The shards this node serves now, each at the epoch it holds it at.
    var servingEpochs: [ShardID: Int64] {
        let leases = state.value.leases
        return leases.owned.filter { !leases.draining.contains($0.key) }
    }

    /// The epoch this node serves `shard` at; nil when it does not serve it (not held, or draining).
    func epoch(serving shard: ShardID) -> Int64? {
        let leases = state.value.leases
        return leases.draining.contains(shard) ? nil : leases.owned[shard]
    }

    /// The node that held `shard` as the last round said, when another node did.
    func owner(of shard: ShardID) -> String? {
        state.value.leases.owners[shard]
    }

    /// A commit of `shards` was fenced: they are lost.
    func fenced(_ shards: [ShardID]) {
        perform(state.value.leases.fenced(shards))
    }

    /// Starts taking and renewing leases; `drain` is asked to drain shards (see ``State/drain``).
    func start(drain: @escaping ([ShardID], @escaping () -> Void) -> Void) {
        guard state.value.ticker == nil else { return }
        state.value.drain = drain
        state.value.ticker = engineLoop.scheduleRepeatedTask(initialDelay: .zero, delay: Self.tickInterval) { _ in
            self.perform(self.state.value.leases.tick(at: self.now))
        }
    }

    /// Hands every shard back and completes when they are released, or at `deadline` (their leases
    /// then run out by themselves).
    func stop(deadline: NIODeadline) -> EventLoopFuture<Void> {
        let promise = engineLoop.makePromise(of: Void.self)
        let state = state.value
        if state.hasStopped {
            promise.succeed()
        } else {
            state.stopped.append(promise)
            engineLoop.scheduleTask(deadline: deadline) { self.finish() }
            perform(state.leases.stop())
        }
        return promise.futureResult
    }

    /// Ends the round thread, after ``stop(deadline:)`` and after the store was closed (a round
    /// waiting on the database then fails at once).
    func close() async {
        try? await rounds.shutdownGracefully()
    }

    private var now: Duration { .nanoseconds((NIODeadline.now() - origin).nanoseconds) }

    private func perform(_ actions: [ShardLeases.Action]) {
        for action in actions {
            switch action {
            case .round(let round):
                run(round)
            case .acquired(let shards):
                logger.info("took shard leases", metadata: ["shards": "\(shards.count)", "owned": "\(state.value.leases.owned.count)"])
            case .drain(let shards):
                state.value.drain(shards) { self.perform(self.state.value.leases.drained(shards)) }
            case .lost(let shards):
                metrics.shardLeasesLost.increment(by: Int64(shards.count))
                logger.warning("lost shard leases", metadata: ["shards": "\(shards.map(\.rawValue))", "owned": "\(state.value.leases.owned.count)"])
            case .stopped:
                finish()
            }
        }
        metrics.shardsOwned.record(state.value.leases.owned.count)
    }

    private func run(_ round: ShardLeaseRound) {
        let store = self.store
        let nodeID = self.nodeID
        let seconds = Double(state.value.leases.settings.leaseDuration.components.seconds)
            + Double(state.value.leases.settings.leaseDuration.components.attoseconds) / 1e18
        rounds.runIfActive(eventLoop: engineLoop) {
            try store.leaseRound(round, node: nodeID, leaseSeconds: seconds)
        }.whenComplete { result in
            let state = self.state.value
            switch result {
            case .success(let answer):
                if state.failedRounds > 0 {
                    self.logger.info("shard lease rounds succeed again", metadata: ["failed_rounds": "\(state.failedRounds)"])
                }
                state.failedRounds = 0
                self.perform(state.leases.roundSucceeded(answer, at: self.now))
            case .failure(let error):
                state.failedRounds += 1
                self.logger.log(level: state.failedRounds == 1 ? .warning : .debug, "shard lease round failed; retrying",
                                metadata: ["error": "\(error)"])
                self.perform(state.leases.roundFailed(at: self.now))
            }
        }
    }

    private func finish() {
        let state = state.value
        guard !state.hasStopped else { return }
        state.hasStopped = true
        state.ticker?.cancel()
        state.ticker = nil
        let waiting = state.stopped
        state.stopped = []
        for promise in waiting { promise.succeed() }
    }
}
