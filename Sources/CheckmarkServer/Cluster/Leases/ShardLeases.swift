import CheckmarkCore
import CheckmarkStorage

/// A node's side of the shard leases, as a state machine: values in, actions out, no clock and no
/// I/O. Its driver calls ``tick(at:)`` often (every tenth of a second is plenty), performs the
/// actions in the order returned, and reports how each round ended. Times are a monotonic clock's
/// readings as durations since any fixed origin.
///
/// The rules it keeps:
/// - One round at a time (``Action/round(_:)``), every ``Settings/renewInterval`` and as soon as a
///   shard is drained: every lease held is renewed in it; drained shards are released; free shards
///   are claimed up to an even share.
/// - An even share is `ceil(shards / live nodes)`: a node holding more drains the excess (the
///   highest-numbered shards first) and releases each one once its driver reports it
///   ``drained(_:)``; a node holding fewer claims what is free. Nothing is claimed while a drain is
///   under way, so shards do not bounce between nodes.
/// - A renewal the table refused (another node took the shard, at a newer epoch), a commit the
///   fence refused (``fenced(_:)``), and a lease not renewed within ``Settings/leaseDuration`` of the
///   start of its last successful round (the database may have handed it on: this node cannot know)
///   all end in ``Action/lost(_:)``: the shard is dropped and never served again at that epoch.
///   Safety does not rest on these times: a commit carries its shard's epoch and the database
///   refuses a stale one. They only stop a node from serving what it no longer owns.
/// - A failed round changes nothing but the time of the next (after ``Settings/renewInterval``).
/// - ``stop()`` drains every shard, releases them in one last round, then says ``Action/stopped``,
///   so that the other nodes take them at once instead of waiting for the leases to run out.
struct ShardLeases {
    struct Settings: Equatable {
        /// How many shards there are.
        var shardCount = ShardMap.shardCount
        /// How long a lease lasts from the round that took or renewed it (the database's clock).
        var leaseDuration: Duration = .seconds(5)
        /// Time between rounds; well below ``leaseDuration``, so that a lease survives missed rounds.
        var renewInterval: Duration = .seconds(1)
    }

    enum Action: Equatable {
        /// Run this round against the lease table; report ``roundSucceeded(_:at:)`` or ``roundFailed(at:)``.
        case round(ShardLeaseRound)
        /// These shards are this node's now, at these epochs: load them and serve them.
        case acquired([ShardID: Int64])
        /// Stop taking commands for these shards (answer them with a retryable error) and report
        /// ``drained(_:)`` once nothing of theirs is being committed.
        case drain([ShardID])
        /// These shards are no longer this node's: drop what is held of them, answer their commands
        /// with a retryable error.
        case lost([ShardID])
        /// After ``stop()``: every shard was released (or lost); nothing more will come.
        case stopped
    }

    let settings: Settings
    /// The shards held, at their epochs.
    private(set) var owned: [ShardID: Int64] = [:]
    /// Held shards being handed over: not serving, not yet released.
    private(set) var draining: Set<ShardID> = []
    /// Drained shards, released in the next round.
    private var releasable: Set<ShardID> = []
    /// The live nodes, this one included, as the last round said.
    private(set) var liveNodes = 1
    /// The shards other nodes held, with their owners, as the last round said (where to send a
    /// shard's commands; the owner says so when it no longer holds one).
    private(set) var owners: [ShardID: String] = [:]
    /// The round being run, and when it started.
    private var inFlight: (round: ShardLeaseRound, startedAt: Duration)?
    /// When each held lease is surely still valid until (by this node's clock).
    private var validUntil: [ShardID: Duration] = [:]
    private var nextRoundAt: Duration = .zero
    private var stopping = false
    private var stoppedSaid = false

    init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// An even share of the shards for the live nodes.
    var target: Int {
        stopping ? 0 : (settings.shardCount + max(liveNodes, 1) - 1) / max(liveNodes, 1)
    }

    /// The shards this node serves: held and not draining.
    var serving: Set<ShardID> { Set(owned.keys).subtracting(draining) }

    // MARK: Inputs

    /// Time passed: leases past their validity are lost, and a round starts when one is due.
    mutating func tick(at now: Duration) -> [Action] {
        guard !stoppedSaid else { return [] }
        var actions = expire(at: now)
        // Drained shards go back at once: the sooner released, the sooner another node serves them.
        if inFlight == nil, now >= nextRoundAt || !releasable.isEmpty {
            actions += startRound(at: now)
        }
        return actions + stoppedIfDone()
    }

    /// The round in flight ended with `result`.
    mutating func roundSucceeded(_ result: ShardLeaseRoundResult, at now: Duration) -> [Action] {
        guard let (round, startedAt) = inFlight else { return [] }
        inFlight = nil
        liveNodes = max(result.liveNodes, 1)
        owners = result.owners
        var actions: [Action] = []
        // Renewals the table refused: another node holds those shards now.
        var lost: [ShardID] = []
        for (shard, epoch) in round.renew where owned[shard] == epoch {
            if result.renewed.contains(shard) {
                validUntil[shard] = startedAt + settings.leaseDuration
            } else {
                lost.append(shard)
            }
        }
        actions += drop(lost)
        for shard in round.release.keys where owned[shard] == round.release[shard] {
            owned[shard] = nil
            draining.remove(shard)
            releasable.remove(shard)
            validUntil[shard] = nil
        }
        var acquired: [ShardID: Int64] = [:]
        for (shard, epoch) in result.claimed {
            // A claim that comes back while stopping is given back in the next round.
            owned[shard] = epoch
            validUntil[shard] = startedAt + settings.leaseDuration
            if stopping {
                draining.insert(shard)
                releasable.insert(shard)
            } else {
                acquired[shard] = epoch
            }
        }
        if !acquired.isEmpty { actions.append(.acquired(acquired)) }
        actions += rebalance()
        actions += expire(at: now)
        if stopping && !releasable.isEmpty { actions += startRound(at: now) }
        return actions + stoppedIfDone()
    }

    /// The round in flight failed: nothing is known of it; the next comes after the usual interval.
    mutating func roundFailed(at now: Duration) -> [Action] {
        guard inFlight != nil else { return [] }
        inFlight = nil
        let actions = expire(at: now)
        // A node stopping gives up on releasing: its leases run out by themselves.
        guard stopping else { return actions }
        return actions + drop(Array(owned.keys)) + stoppedIfDone()
    }

    /// Nothing of `shards` is being committed any more: they go back in a round at the next tick.
    mutating func drained(_ shards: [ShardID]) -> [Action] {
        for shard in shards where draining.contains(shard) { releasable.insert(shard) }
        return []
    }

    /// A commit of `shards` was refused by the fence: another node owns them at a newer epoch.
    mutating func fenced(_ shards: [ShardID]) -> [Action] {
        drop(shards.filter { owned[$0] != nil })
    }

    /// Hand every shard over and stop: drain them all, release them in one round, then ``Action/stopped``.
    mutating func stop() -> [Action] {
        guard !stopping else { return [] }
        stopping = true
        let toDrain = serving.sorted()
        draining.formUnion(toDrain)
        return (toDrain.isEmpty ? [] : [.drain(toDrain)]) + stoppedIfDone()
    }

    // MARK: Steps

    private mutating func startRound(at now: Duration) -> [Action] {
        var round = ShardLeaseRound()
        for (shard, epoch) in owned {
            if releasable.contains(shard) {
                round.release[shard] = epoch
            } else {
                round.renew[shard] = epoch
            }
        }
        // Claims wait for drains to end. A node's first round asks for every shard and gets the free
        // ones (nothing of live nodes): alone, it takes them all; then it learns how many nodes there are.
        if draining.isEmpty && !stopping { round.claim = max(0, target - owned.count) }
        inFlight = (round, now)
        nextRoundAt = now + settings.renewInterval
        return [.round(round)]
    }

    /// Drains what a node holds beyond its share: the highest-numbered shards first.
    private mutating func rebalance() -> [Action] {
        let excess = owned.count - draining.count - target
        guard excess > 0 else { return [] }
        let toDrain = Array(serving.sorted().suffix(excess))
        draining.formUnion(toDrain)
        return [.drain(toDrain)]
    }

    /// Loses every lease not known valid at `now`.
    private mutating func expire(at now: Duration) -> [Action] {
        drop(validUntil.filter { $0.value <= now }.map(\.key))
    }

    private mutating func drop(_ shards: [ShardID]) -> [Action] {
        guard !shards.isEmpty else { return [] }
        for shard in shards {
            owned[shard] = nil
            draining.remove(shard)
            releasable.remove(shard)
            validUntil[shard] = nil
        }
        return [.lost(shards.sorted())]
    }

    private mutating func stoppedIfDone() -> [Action] {
        guard stopping, !stoppedSaid, owned.isEmpty, inFlight == nil else { return [] }
        stoppedSaid = true
        return [.stopped]
    }
}
