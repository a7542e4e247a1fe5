import CheckmarkCore
import CheckmarkStorage
import CheckmarkWire

/// The order in which applied commands become durable and are answered: values in, actions out. It
/// holds no clock, does no I/O and runs nothing itself; its driver applies commands, performs the
/// actions it returns, in the order returned, and reports back how writes ended. One value per engine,
/// used on the engine's loop only.
///
/// The rules it keeps:
/// - A command's reply and its events are released only when its batch is durable, in the order the
///   commands were applied (``Action/reply(_:_:)`` then ``Action/fanOut(_:)``, item after item).
/// - A query (an item without an entry) is released with the batch of the commands applied before it,
///   never earlier.
/// - Commands applied while a batch is being written join the next batch (group commit).
/// - On one node, when a batch is durable the next one is handed to the writer (``Action/write(_:)``)
///   before the durable batch's items are released, so the disk works while the engine answers.
/// - When a write fails, every item not yet released fails with that error (``Reply/failed(_:)``),
///   the service stops accepting (``admission(isDisconnect:)`` refuses with
///   ``ServiceError/storage(_:)``), and the failure is reported once (``Action/fatal(_:)``). An item
///   applied after it (work that was waiting for storage) fails at once.
/// - Once draining, only disconnects are admitted; ``Action/drained`` comes when nothing applied is
///   left unreleased (or when storage failed).
///
/// In ``Mode/cluster`` work waits for the next commit cycle (``Action/cycle(lock:)``): the
/// driver catches up with other nodes' commits, runs the cycle's work (``takeCycleWork()``), hands
/// over what it applied (``cycleApplied()``) and commits it. Catch-up and queued work run in the same
/// cycle, catch-up first.
struct CommitSequencer<Entry, Event, Token, Work> {
    enum Mode {
        /// One node: a batch is written as soon as the previous one is durable.
        case local
        /// A node of a cluster: work runs in commit cycles that follow the shared journal.
        case cluster
    }

    /// What a cycle's work needs of the journal's append lock: the most any of it needs.
    enum Lock: Int, Comparable {
        /// Nothing to commit (queries, connections' commands, catching up): no lock.
        case none
        /// Commands of shards this node owns: taken shared, beside other owners' commits.
        case shared
        /// Any other command that changes state (users, channel types, commands over several
        /// shards, shards nobody is known to own): taken alone.
        case exclusive

        static func < (lhs: Lock, rhs: Lock) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// How an applied item ends.
    enum Reply {
        /// Its batch is durable: the item's own result is released.
        case durable
        /// Storage failed before it became durable: it fails with ``ServiceError/storage(_:)``.
        case failed(StorageError)
    }

    enum Action {
        /// Run this work now, in order. (Work is queued only in cluster mode; otherwise, and once
        /// storage failed, it runs at once.)
        case run([Work])
        /// Write these entries in one transaction; report ``batchCommitted()`` or ``batchFailed(_:)``.
        case write([Entry])
        /// Cluster: run one commit cycle (holding the journal's append lock as `lock` says); report
        /// ``batchCommitted()`` or ``batchFailed(_:)``.
        case cycle(lock: Lock)
        /// Complete an item.
        case reply(Token, Reply)
        /// Send an item's events (right after its reply).
        case fanOut([Event])
        /// Storage failed: stop accepting and say so, before the waiting items fail.
        case storageFailed(StorageError)
        /// Everything applied so far has been released (or failed): complete the waiting drains.
        case drained
        /// Report the storage failure to whoever stops the server, after every item failed.
        case fatal(StorageError)
    }

    /// An applied item waiting for release. (Its entry, if any, waits in ``pendingEntries``: the
    /// write takes the entries, the release the rest.)
    private typealias Item = (events: [Event], token: Token)

    let mode: Mode
    /// The storage failure that stopped the service, if any.
    private(set) var failure: StorageError?
    /// False once draining or failed: only disconnects are admitted.
    private(set) var accepting = true
    /// Applied items not yet handed to a write.
    private var pending: [Item] = []
    /// The entries of `pending`'s items, in the same order.
    private var pendingEntries: [Entry] = []
    /// The items of the batch being written.
    private var inFlight: [Item] = []
    /// A batch (or cycle) is being written.
    private(set) var committing = false
    private var drainWaiting = false
    /// Cluster: work waiting for the next cycle, and the append lock it needs.
    private var queued: [Work] = []
    private var queuedLock = Lock.none
    /// Cluster: another node committed (or may have) since the last cycle.
    private var catchUpWanted = false
    /// Cluster: the current cycle's work until the driver takes it.
    private var cycleWork: [Work]?

    init(mode: Mode) {
        self.mode = mode
    }

    // MARK: Inputs

    /// Whether a command may be applied now: nil when it may; ``ServiceError/storage(_:)`` after a
    /// failed write; ``ServiceError/shuttingDown`` while draining, unless it is a disconnect or was
    /// `admittedEarlier` (before the drain: a command applied again once storage gave back what it needed).
    func admission(isDisconnect: Bool, admittedEarlier: Bool = false) -> ServiceError? {
        if let failure { return .storage(failure) }
        if !accepting && !isDisconnect && !admittedEarlier { return .shuttingDown }
        return nil
    }

    /// An admitted command was applied (`entry` nil: nothing to store, or a query's answer): it is
    /// released with the batch that makes everything applied before it durable.
    mutating func applied(entry: consuming Entry?, events: consuming [Event], token: consuming Token) -> [Action] {
        // After a failure nothing becomes durable: the item fails now rather than wait for a write
        // or cycle that never comes (a drain would wait for it forever).
        if let failure { return [.reply(token, .failed(failure))] }
        // Taken, not borrowed: kept until the release, so they move into the lists (a borrowed
        // entry and token were copied, a retain and release of each of their parts).
        pending.append((events, token))
        if let entry { pendingEntries.append(entry) }
        guard mode == .local, !committing else { return [] }
        return startBatch()
    }

    /// Whether ``enqueue(_:lock:)`` runs work at once, returning only `.run([work])`: on one
    /// node, and after a failure. (The service then runs it without asking, sparing two lists per
    /// command.)
    var runsWorkAtOnce: Bool { mode != .cluster || failure != nil }

    /// Work (applying a command, answering a query) to run in order with the commits: at once on one
    /// node or after a failure; in the next cycle in a cluster, which holds the append lock as `lock`
    /// says (or as other work of the cycle needs, if more).
    mutating func enqueue(_ work: Work, lock: Lock) -> [Action] {
        guard !runsWorkAtOnce else { return [.run([work])] }
        queued.append(work)
        queuedLock = max(queuedLock, lock)
        return committing ? [] : startCycle()
    }

    /// Cluster: another node committed (or may have): the next cycle catches up. Ignored after a failure.
    mutating func catchUpRequested() -> [Action] {
        guard mode == .cluster, failure == nil else { return [] }
        catchUpWanted = true
        return committing ? [] : startCycle()
    }

    /// Cluster, inside a cycle: the work to run now (after applying other nodes' commits).
    mutating func takeCycleWork() -> [Work] {
        defer { cycleWork = nil }
        return cycleWork ?? []
    }

    /// Cluster, inside a cycle, after its work ran: the entries to commit in this cycle.
    mutating func cycleApplied() -> [Entry] {
        inFlight = pending
        pending = []
        defer { pendingEntries = [] }
        return pendingEntries
    }

    /// The batch (or cycle) being written is durable: its items are released in order. On one node
    /// the next batch's write, if there is one, comes first: nothing it holds was released yet, and
    /// the writer need not wait for the answers to this batch.
    mutating func batchCommitted() -> [Action] {
        committing = false
        let durable = inFlight
        inFlight = []
        guard mode == .local else { return release(durable) + startCycle() }
        let next = startBatch()
        guard committing else {
            // No write: the next items (queries) or the drain follow this batch's items.
            return release(durable) + next
        }
        var actions = next
        release(durable, into: &actions)
        return actions
    }

    /// The batch (or cycle) being written failed: every unreleased item fails, the service refuses
    /// further commands, and work not run yet runs now (and fails).
    mutating func batchFailed(_ error: StorageError) -> [Action] {
        committing = false
        failure = error
        accepting = false
        var actions: [Action] = [.storageFailed(error)]
        for item in inFlight + pending { actions.append(.reply(item.token, .failed(error))) }
        inFlight = []
        pending = []
        pendingEntries = []
        drainWaiting = false
        actions.append(.drained)
        actions.append(.fatal(error))
        let notRun = (cycleWork ?? []) + queued
        cycleWork = nil
        queued = []
        queuedLock = .none
        catchUpWanted = false
        if !notRun.isEmpty { actions.append(.run(notRun)) }
        return actions
    }

    /// Stop admitting commands other than disconnects; ``Action/drained`` once everything applied
    /// so far is released.
    mutating func drainRequested() -> [Action] {
        accepting = false
        if !committing && pending.isEmpty && queued.isEmpty { return [.drained] }
        drainWaiting = true
        return []
    }

    // MARK: Steps

    private mutating func startBatch() -> [Action] {
        guard !pending.isEmpty else { return drainedIfWaiting() }
        let items = pending
        let entries = pendingEntries
        pending = []
        pendingEntries = []
        // Nothing to store: everything before these items is durable already (and, once they are
        // released, everything applied is: a drain waiting for that completes).
        if entries.isEmpty { return release(items) + drainedIfWaiting() }
        inFlight = items
        committing = true
        return [.write(entries)]
    }

    private mutating func startCycle() -> [Action] {
        guard !queued.isEmpty || catchUpWanted else { return drainedIfWaiting() }
        let lock = queuedLock
        cycleWork = queued
        queued = []
        queuedLock = .none
        catchUpWanted = false
        committing = true
        return [.cycle(lock: lock)]
    }

    private func release(_ items: consuming [Item]) -> [Action] {
        var actions: [Action] = []
        release(items, into: &actions)
        return actions
    }

    /// Appends the items' replies and fan-outs in order, moving each item's parts into its actions.
    private func release(_ items: consuming [Item], into actions: inout [Action]) {
        actions.reserveCapacity(actions.count + items.count * 2)
        // Reversed, then taken from the end: both move the items.
        items.reverseByMoving()
        while let (events, token) = items.popLast() {
            actions.append(.reply(token, .durable))
            if !events.isEmpty { actions.append(.fanOut(events)) }
        }
    }

    private mutating func drainedIfWaiting() -> [Action] {
        guard drainWaiting else { return [] }
        drainWaiting = false
        return [.drained]
    }
}
