import CheckmarkCore
import CheckmarkStorage
import CheckmarkWebSocket
import CoreMetrics
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The receipts engine behind a durable group commit. Commands are applied one at a time on a single
/// engine event loop; every command that changed durable state joins the next batch, and a batch is
/// written in one transaction while the engine goes on applying. A command's reply and its events are
/// released only when its batch is durable, in the order the commands were applied; a query's answer
/// waits for every command applied before it. When a commit fails, every waiting command fails with
/// ``ServiceError/storage(_:)``, the service refuses further commands and reports it through
/// `onFatalError`, and the server stops: memory and disk may disagree, and a restart reloads the truth.
///
/// Over a ``SharedReceiptsStore`` (a cluster of nodes on one PostgreSQL database) the order is the
/// database's: each command waits for the next commit cycle, which takes the journal's append lock,
/// applies what other nodes committed since this node last looked (and sends those events to this
/// node's connections), then applies the waiting commands and commits them. Watches, queries and
/// connection changes wait for a cycle too, without the lock, so that a client sees on any node
/// everything committed before it asked. Other nodes' commits are picked up when PostgreSQL notifies
/// them, and at least every ``clusterPollInterval`` in case a notification was lost.
public final class ReceiptsService: Sendable {
    /// How often a cluster node looks for other nodes' commits without being notified.
    public static let clusterPollInterval = TimeAmount.seconds(1)
    /// How long a cluster node waits for the node holding a connection to answer a command for it
    /// (``PeerMessage``); with no answer, the connection does not exist (`unknown_connection`).
    public static let peerAnswerTimeout = TimeAmount.seconds(1)
    /// This node's name among the cluster's nodes (random, per start).
    let nodeID = String(UInt64.random(in: 1...UInt64.max), radix: 36)
    public let engineLoop: any EventLoop
    private let store: any ReceiptsStore
    /// The same store when it is shared by a cluster; nil for a single node.
    private let shared: (any SharedReceiptsStore)?
    private let writer: NIOThreadPool
    private let state: NIOLoopBoundBox<State>
    private let metrics: ServiceMetrics
    private let logger: Logger
    private let onFatalError: @Sendable (StorageError) -> Void
    /// How fanned-out frames are compressed for connections that share compression.
    let compression: PerMessageDeflateConfiguration
    /// Receives every applied command and its events, when a trace is being recorded.
    private let recorder: TraceRecorder?
    /// Changes what the engine decided before it is stored and sent: only for proving that the replay
    /// diff catches a build whose rules differ (`checkmark replay run` tests). Nil in production.
    private let alteration: (@Sendable (inout ReceiptsOutcome) -> Void)?

    /// One applied command waiting for its batch.
    private struct Pending {
        var entry: JournalEntry?
        var events: [(ReceiptsEvent, SharedEvent)]
        var complete: (Result<ReceiptsOutcome, ServiceError>) -> Void
        var outcome: Result<ReceiptsOutcome, ServiceError>
    }

    private final class State {
        var engine: ReceiptsEngine
        var lastSeq: Int64
        var lastEventSeq: Int64
        var channelSeqs: [ChannelCID: Int64]
        var pending: [Pending] = []
        var footprint = StateFootprint()
        var committing = false
        var accepting = true
        var failed: StorageError?
        var sinks: [String: any EventSink] = [:]
        /// Per open connection, the last journal event sequence when it opened.
        var openedAfterEventSeq: [String: Int64] = [:]
        /// Live trace readers (`/admin/trace`), by id.
        var traceSubscribers: [String: TraceSubscriber] = [:]
        /// Commands applied while a trace was being taken: numbers the trace's command lines.
        var tracedCommands: Int64 = 0
        var drained: [EventLoopPromise<Void>] = []
        /// Cluster: work waiting for the next commit cycle, and whether any of it changes state.
        var queued: [() -> Void] = []
        var queuedDurable = false
        /// Cluster: another node committed (or may have) since the last cycle.
        var catchUpWanted = false
        /// Cluster: the applied items of the cycle being committed.
        var inFlight: [Pending] = []
        var poll: RepeatedTask?
        /// Cluster: commands this node asked other nodes to apply, by request number.
        var peerWaiting: [Int: (Result<ReceiptsOutcome, ServiceError>) -> Void] = [:]
        var peerRequests = 0
        /// Cluster: the other nodes' watchers, and the channels whose local watchers changed since
        /// this node last told the others.
        var presence = ClusterPresence()
        var presenceChanged: Set<ChannelCID> = []

        init(_ stored: StoredState, maxWatchedChannelsPerConnection: Int, maxUserProfileBytes: Int) {
            engine = ReceiptsEngine(restoring: stored.snapshot)
            engine.maxWatchedChannelsPerConnection = maxWatchedChannelsPerConnection
            engine.maxUserProfileBytes = maxUserProfileBytes
            lastSeq = stored.lastSeq
            lastEventSeq = stored.lastEventSeq
            channelSeqs = stored.channelSeqs
        }
    }

    /// Loads the state from `store` and starts serving on `engineLoop`. `maxWatchedChannelsPerConnection`
    /// bounds the watches of one connection however they come (socket or REST).
    public static func start(
        store: any ReceiptsStore, engineLoop: any EventLoop, metrics: ServiceMetrics, logger: Logger,
        maxWatchedChannelsPerConnection: Int = .max, maxUserProfileBytes: Int = ReceiptsEngine.defaultMaxUserProfileBytes,
        compression: PerMessageDeflateConfiguration = .init(), recorder: TraceRecorder? = nil,
        alteration: (@Sendable (inout ReceiptsOutcome) -> Void)? = nil,
        onFatalError: @escaping @Sendable (StorageError) -> Void = { _ in }
    ) async throws -> ReceiptsService {
        let writer = NIOThreadPool(numberOfThreads: 1)
        writer.start()
        let stored = try await writer.runIfActive { try store.load() }
        let service = try await engineLoop.submit {
            ReceiptsService(
                store: store, engineLoop: engineLoop, writer: writer,
                state: State(stored, maxWatchedChannelsPerConnection: maxWatchedChannelsPerConnection, maxUserProfileBytes: maxUserProfileBytes),
                metrics: metrics,
                logger: logger, compression: compression, recorder: recorder, alteration: alteration, onFatalError: onFatalError)
        }.get()
        if let shared = store as? any SharedReceiptsStore {
            try await engineLoop.submit { service.joinCluster(shared) }.get()
        }
        return service
    }

    /// Starts following other nodes' commits: on notification, and by polling.
    private func joinCluster(_ shared: any SharedReceiptsStore) {
        state.value.poll = engineLoop.scheduleRepeatedTask(initialDelay: Self.clusterPollInterval, delay: Self.clusterPollInterval) { _ in
            self.wantCatchUp(seq: 0)
            self.tellPeers([PeerMessage.alive(from: self.nodeID).encoded])
        }
        tellPeers([PeerMessage.hello(from: nodeID).encoded])
        shared.startListening(
            onAppend: { seq in self.engineLoop.execute { self.wantCatchUp(seq: seq) } },
            onPeerMessage: { text in
                guard let message = PeerMessage(text) else { return }
                self.engineLoop.execute { self.receive(message) }
            })
    }

    /// Another node committed up to `seq` (0: unknown): runs a cycle unless this node is there already.
    private func wantCatchUp(seq: Int64) {
        let state = state.value
        guard seq == 0 || seq > state.lastSeq, state.failed == nil else { return }
        state.catchUpWanted = true
        if !state.committing { startCycle() }
    }

    private init(store: any ReceiptsStore, engineLoop: any EventLoop, writer: NIOThreadPool, state: State,
                 metrics: ServiceMetrics, logger: Logger, compression: PerMessageDeflateConfiguration,
                 recorder: TraceRecorder?, alteration: (@Sendable (inout ReceiptsOutcome) -> Void)?,
                 onFatalError: @escaping @Sendable (StorageError) -> Void) {
        self.compression = compression
        self.recorder = recorder
        self.alteration = alteration
        self.store = store
        shared = store as? any SharedReceiptsStore
        self.engineLoop = engineLoop
        self.writer = writer
        self.state = NIOLoopBoundBox(state, eventLoop: engineLoop)
        self.metrics = metrics
        self.logger = logger
        self.onFatalError = onFatalError
    }

    /// Whether commands are accepted and storage is healthy (`/readyz`).
    public var isReady: Bool { store.isReady && accepting.withLockedValue { $0 } }
    private let accepting = NIOLockedValueBox(true)

    // MARK: Commands

    /// Applies `command` now and completes once it is durable (or refused). For `.connect`, `sink`
    /// starts receiving the connection's events.
    public func submit(_ command: ReceiptsCommand, sink: (any EventSink)? = nil) -> EventLoopFuture<ReceiptsOutcome> {
        let promise = engineLoop.makePromise(of: ReceiptsOutcome.self)
        let sinkBox = sink.map { UnsafeTransfer($0) }
        engineLoop.execute {
            self.perform(durable: ReceiptsEngine.isDurable(command)) {
                let complete: (Result<ReceiptsOutcome, ServiceError>) -> Void = { result in
                    switch result {
                    case .success(let outcome): promise.succeed(outcome)
                    case .failure(let error): promise.fail(error)
                    }
                }
                if self.shared != nil, let connectionID = PeerMessage.isForwardable(command),
                   self.state.value.engine.connections[connectionID] == nil {
                    return self.askPeers(command, connectionID: connectionID, complete: complete)
                }
                self.apply(command, sink: sinkBox?.wrappedValue, complete: complete)
            }
        }
        return promise.futureResult
    }

    /// Reads the engine's state as of every command submitted before, once those are durable. When
    /// the commit of a command before it fails, the read fails too (`storage_unavailable`): what it
    /// saw was never durable and is never served.
    public func read<T: Sendable>(_ body: @escaping @Sendable (ReceiptsEngine) throws -> T) -> EventLoopFuture<T> {
        let promise = engineLoop.makePromise(of: T.self)
        engineLoop.execute {
            self.perform(durable: false) {
                let state = self.state.value
                // After a failed commit the engine holds what never became durable: nothing is read from it.
                if let failed = state.failed { return promise.fail(ServiceError.storage(failed)) }
                let value = Result { try body(state.engine) }
                self.enqueue(Pending(entry: nil, events: [], complete: { outcome in
                    switch outcome {
                    case .success: promise.completeWith(value)
                    case .failure(let error): promise.fail(error)
                    }
                }, outcome: .success(.unchanged)))
            }
        }
        return promise.futureResult
    }

    /// Makes a connection of `userID` watch `cid` (as ``submit(_:sink:)`` with `.watch`). With
    /// `resumingAfter`, the last `channel_seq` the client saw, it also reads from the journal what the
    /// connection missed: every event after that sequence up to the one at which the watch took effect,
    /// so that together with the live events that follow there is no gap and no duplicate. Completes
    /// once the watch is durable-ordered and the journal was read (a journal that cannot be read gives
    /// an unavailable resume); fails as the watch command does.
    public func watch(connectionID: String, userID: String, cid: ChannelCID, resumingAfter after: Int64?,
                      maxResumeEvents: Int = ChannelResume.defaultMaxEvents) -> EventLoopFuture<ChannelResume?> {
        let promise = engineLoop.makePromise(of: ChannelResume?.self)
        engineLoop.execute { self.perform(durable: false) {
            // A watch emits no event: the channel's sequence now is where live events will begin.
            let head = self.state.value.channelSeqs[cid] ?? 0
            let openedAfter = self.state.value.openedAfterEventSeq[connectionID] ?? .max
            self.apply(.watch(connectionID: connectionID, cid: cid), sink: nil) { result in
                switch result {
                case .failure(let error):
                    promise.fail(error)
                case .success:
                    guard let after else { return promise.succeed(nil) }
                    if let early = ChannelResume.precheck(cid: cid, after: after, head: head, maxEvents: maxResumeEvents) {
                        return promise.succeed(early)
                    }
                    // Every command applied before the watch is durable now: the journal holds up to head.
                    let store = self.store
                    self.writer.runIfActive(eventLoop: self.engineLoop) { try store.channelEvents(cid, after: after, through: head) }
                        .map { ChannelResume.build(cid: cid, userID: userID, after: after, head: head, rows: $0, openedAfterEventSeq: openedAfter) }
                        // The watch took effect: a journal that cannot be read makes the resume fail, not the watch.
                        .recover { error in
                            ChannelResume(cid: cid, after: after, head: head, outcome: .unavailable(reason: "the journal could not be read: \(error)"))
                        }
                        .cascade(to: promise)
                }
            }
        } }
        return promise.futureResult
    }

    private func apply(_ command: ReceiptsCommand, sink: (any EventSink)?, complete: @escaping (Result<ReceiptsOutcome, ServiceError>) -> Void) {
        let state = state.value
        if let failed = state.failed {
            complete(.failure(.storage(failed)))
            return
        }
        let isDisconnect: Bool
        if case .disconnect = command { isDisconnect = true } else { isDisconnect = false }
        guard state.accepting || isDisconnect else {
            complete(.failure(.shuttingDown))
            return
        }
        if shared != nil { notePresenceChange(command) }
        let now = Timestamp(rawValue: WallClock.now().rawValue)
        state.engine.discardFootprint()  // others' commits applied here are already stored
        switch state.engine.apply(command, at: now) {
        case .failure(let error):
            metrics.rejected(error)
            enqueue(Pending(entry: nil, events: [], complete: complete, outcome: .failure(.rejected(error))))
        case .success(var outcome):
            alteration?(&outcome)
            switch command {
            case .connect(let connectionID, _):
                if let sink { state.sinks[connectionID] = sink }
                state.openedAfterEventSeq[connectionID] = state.lastEventSeq
            case .disconnect(let connectionID):
                state.sinks[connectionID] = nil
                state.openedAfterEventSeq[connectionID] = nil
            default: break
            }
            var entry: JournalEntry?
            let shared = share(outcome, of: command)
            if recorder != nil || !state.traceSubscribers.isEmpty {
                state.tracedCommands += 1
                let lines = TraceRecorder.lines(
                    seq: state.tracedCommands, command, at: now,
                    events: shared.map { ($0.0, $0.1.channelSeq, $0.1.encoded.stored) })
                if let failure = recorder?.write(lines) { logger.error("\(failure)") }
                for subscriber in state.traceSubscribers.values { subscriber.send(lines) }
            }
            if outcome.changed && ReceiptsEngine.isDurable(command) {
                entry = journal(command, shared)
                state.engine.takeFootprint(into: &state.footprint)
                metrics.accepted(command)
            }
            enqueue(Pending(entry: entry, events: shared, complete: complete, outcome: .success(outcome)))
        }
    }

    /// Gives each event its channel sequence (durable commands only) and its shared encoding.
    private func share(_ outcome: ReceiptsOutcome, of command: ReceiptsCommand) -> [(ReceiptsEvent, SharedEvent)] {
        let state = state.value
        var shared: [(ReceiptsEvent, SharedEvent)] = []
        for var event in outcome.events {
            if self.shared != nil, case .messageNew(let message, let sender, _) = event.payload {
                event.payload = .messageNew(message: message, sender: sender, watcherCount: clusterWatcherCount(message.cid))
            }
            var channelSeq: Int64?
            if let cid = event.cid, ReceiptsEngine.isDurable(command) {
                let next = (state.channelSeqs[cid] ?? 0) + 1
                state.channelSeqs[cid] = next
                channelSeq = next
            }
            shared.append((event, SharedEvent(
                type: event.type, encoded: StreamJSON.encode(event, channelSeq: channelSeq), cid: event.cid, channelSeq: channelSeq)))
        }
        return shared
    }

    /// The journal entry of an applied command: the next global and event sequences.
    private func journal(_ command: ReceiptsCommand, _ shared: [(ReceiptsEvent, SharedEvent)]) -> JournalEntry {
        let state = state.value
        state.lastSeq += 1
        var events: [JournalEvent] = []
        for (event, encoded) in shared {
            state.lastEventSeq += 1
            events.append(JournalEvent(
                seq: state.lastEventSeq, cid: encoded.cid, channelSeq: encoded.channelSeq, type: encoded.type,
                audience: event.audience, json: encoded.encoded.stored))
        }
        return JournalEntry(seq: state.lastSeq, at: state.engine.clock, command: command, events: events)
    }

    private func enqueue(_ pending: Pending) {
        let state = state.value
        state.pending.append(pending)
        // In a cluster, the commit cycle that runs this work commits it.
        if !state.committing && shared == nil { startCommit() }
    }

    // MARK: Cluster: other nodes' connections

    /// Asks the node holding `connectionID` to apply `command`; completes with its answer, or with
    /// `unknown_connection` when no node answers within ``peerAnswerTimeout``.
    private func askPeers(_ command: ReceiptsCommand, connectionID: String,
                          complete: @escaping (Result<ReceiptsOutcome, ServiceError>) -> Void) {
        guard let shared else { return }
        let state = state.value
        state.peerRequests += 1
        let id = state.peerRequests
        state.peerWaiting[id] = complete
        let message = PeerMessage.request(from: nodeID, id: id, command: command).encoded
        writer.runIfActive(eventLoop: engineLoop) { try shared.notifyPeers(message) }.whenFailure { error in
            self.logger.warning("cannot reach other nodes", metadata: ["error": "\(error)"])
        }
        engineLoop.scheduleTask(in: Self.peerAnswerTimeout) {
            self.state.value.peerWaiting.removeValue(forKey: id)?(.failure(.rejected(.unknownConnection(connectionID))))
        }
    }

    /// A request for a connection this node may hold (applied, then answered, when it does), or the
    /// answer to one of this node's requests.
    private func receive(_ message: PeerMessage) {
        guard let shared else { return }
        switch message {
        case .request(let from, let id, let command):
            guard from != nodeID, let connectionID = PeerMessage.isForwardable(command) else { return }
            perform(durable: false) {
                guard self.state.value.engine.connections[connectionID] != nil else { return }
                self.apply(command, sink: nil) { result in
                    var error: ReceiptsError?
                    switch result {
                    case .success: break
                    case .failure(.rejected(let refused)): error = refused
                    case .failure(let other): error = .invalidArgument("the node holding the connection could not apply it: \(other)")
                    }
                    let reply = PeerMessage.reply(to: from, id: id, error: error).encoded
                    self.writer.runIfActive(eventLoop: self.engineLoop) { try shared.notifyPeers(reply) }.whenFailure { error in
                        self.logger.warning("cannot answer another node", metadata: ["error": "\(error)"])
                    }
                }
            }
        case .reply(let to, let id, let error):
            guard to == nodeID, let complete = state.value.peerWaiting.removeValue(forKey: id) else { return }
            complete(error.map { .failure(.rejected($0)) } ?? .success(.unchanged))
        case .presence(let from, let cid, let users):
            guard from != nodeID else { return }
            state.value.presence.update(from, cid: cid, users: Set(users), at: .now())
        case .alive(let from):
            guard from != nodeID else { return }
            state.value.presence.heard(from, at: .now())
        case .hello(let from):
            guard from != nodeID else { return }
            state.value.presence.heard(from, at: .now())
            let watched = state.value.engine.channels.values.filter { !$0.watchingUsers.isEmpty }.map(\.cid)
            tellPeers(presenceMessages(for: watched) + [PeerMessage.alive(from: nodeID).encoded])
        }
    }

    /// Sends `messages` to the other nodes from the writer thread (between commits); a message that
    /// cannot be sent is logged: presence heals with the next change, heartbeats with the next beat.
    private func tellPeers(_ messages: [String]) {
        guard let shared, !messages.isEmpty else { return }
        writer.runIfActive(eventLoop: engineLoop) { for message in messages { try shared.notifyPeers(message) } }.whenFailure { error in
            self.logger.warning("cannot reach other nodes", metadata: ["error": "\(error)"])
        }
    }

    /// This node's watchers of each of `cids`, as presence messages (a list too long for one message
    /// is cut to fit: `watcher_count` then counts fewer of this node's watchers elsewhere).
    private func presenceMessages(for cids: some Sequence<ChannelCID>) -> [String] {
        let engine = state.value.engine
        let limit = shared.map { type(of: $0).maxPeerMessageBytes } ?? .max
        return cids.map { cid in
            var users = (engine.channels[cid]?.watchingUsers.keys).map(Array.init) ?? []
            var message = PeerMessage.presence(from: nodeID, cid: cid, users: users).encoded
            while message.utf8.count > limit && !users.isEmpty {
                users.removeLast(max(1, users.count / 10))
                message = PeerMessage.presence(from: nodeID, cid: cid, users: users).encoded
            }
            return message
        }
    }

    /// The distinct users watching `cid` on any node: what `watcher_count` says.
    func clusterWatcherCount(_ cid: ChannelCID) -> Int {
        let state = state.value
        let local = state.engine.channels[cid]?.watchingUsers ?? [:]
        guard shared != nil else { return local.count }
        return state.presence.watchingUsers(of: cid, at: .now()).union(local.keys).count
    }

    // MARK: Cluster commit cycle

    /// A node's command failed to apply where another node had applied it: the engines disagree.
    struct Divergence: Error, CustomStringConvertible {
        var description: String
    }

    /// Remembers which channels' local watchers `command` may change (before it is applied).
    private func notePresenceChange(_ command: ReceiptsCommand) {
        let state = state.value
        switch command {
        case .watch(_, let cid), .stopWatching(_, let cid), .removeMembers(let cid, _):
            state.presenceChanged.insert(cid)
        case .disconnect(let connectionID):
            state.presenceChanged.formUnion(state.engine.watching[connectionID] ?? [])
        default:
            break
        }
    }

    /// Runs `work` now on a single node; in a cluster, in the next commit cycle (with the append lock
    /// when `durable`).
    private func perform(durable: Bool, _ work: @escaping () -> Void) {
        guard shared != nil else { return work() }
        let state = state.value
        state.queued.append(work)
        if durable { state.queuedDurable = true }
        if !state.committing { startCycle() }
    }

    /// One cycle: catch up with the journal, run the queued work, commit what it changed (under the
    /// append lock when anything may change), then release replies and events in order.
    private func startCycle() {
        let state = state.value
        guard let shared, !state.committing else { return }
        guard !state.queued.isEmpty || (state.catchUpWanted && state.failed == nil) else {
            for promise in state.drained { promise.succeed() }
            state.drained = []
            return
        }
        let works = UnsafeTransfer(state.queued)
        let durable = state.queuedDurable && state.failed == nil
        state.queued = []
        state.queuedDurable = false
        state.catchUpWanted = false
        state.committing = true
        if state.failed != nil {
            // Storage failed earlier: every command fails at once, in order.
            works.wrappedValue.forEach { $0() }
            state.committing = false
            release(state.pending)
            state.pending = []
            return startCycle()
        }
        let after = state.lastSeq
        let started = NIODeadline.now()
        let ran = NIOLockedValueBox(false)
        writer.runIfActive(eventLoop: engineLoop) { () throws -> Void in
            let presence = NIOLockedValueBox<[String]>([])
            if durable {
                try shared.append(after: after) { others in
                    try self.engineLoop.submit { () throws -> CommitBatch in
                        ran.withLockedValue { $0 = true }
                        let batch = try self.runCycle(others, works.wrappedValue)
                        presence.withLockedValue { $0 = self.takePresenceMessages() }
                        return batch
                    }.wait()
                }
            } else {
                let others = try shared.commands(after: after, limit: .max)
                let messages = try self.engineLoop.submit { () throws -> [String] in
                    ran.withLockedValue { $0 = true }
                    _ = try self.runCycle(others, works.wrappedValue)
                    return self.takePresenceMessages()
                }.wait()
                presence.withLockedValue { $0 = messages }
            }
            // Before the replies: a client told "watching" is counted when another node next encodes.
            for message in presence.withLockedValue({ $0 }) { try? shared.notifyPeers(message) }
        }.whenComplete { result in
            let state = self.state.value
            state.committing = false
            let items = state.inFlight
            state.inFlight = []
            switch result {
            case .success:
                if durable {
                    self.metrics.committed(batchSize: items.count { $0.entry != nil }, seconds: Double((NIODeadline.now() - started).nanoseconds) / 1e9)
                }
                self.release(items)
                self.startCycle()
            case .failure(let error):
                let storageError = (error as? StorageError) ?? .commitFailed(reason: "\(error)")
                self.fail(with: storageError, items: items)
                // Work the cycle never reached (the database failed first) fails now, in order.
                if !ran.withLockedValue({ $0 }) {
                    works.wrappedValue.forEach { $0() }
                    self.release(state.pending)
                    state.pending = []
                }
            }
        }
    }

    private func takePresenceMessages() -> [String] {
        let state = state.value
        defer { state.presenceChanged = [] }
        return presenceMessages(for: state.presenceChanged)
    }

    /// On the engine loop, inside a cycle: applies others' commits (sending their events to this
    /// node's connections now: they are durable), then the queued work; returns what to commit.
    private func runCycle(_ others: [JournalEntry], _ works: [() -> Void]) throws -> CommitBatch {
        let state = state.value
        try applyCommitted(others)
        works.forEach { $0() }
        state.inFlight = state.pending
        state.pending = []
        let batch = CommitBatch(entries: state.inFlight.compactMap(\.entry), footprint: state.footprint, engine: state.engine)
        state.footprint = StateFootprint()
        return batch
    }

    /// Applies entries other nodes committed, in journal order, exactly as they applied them.
    /// - Throws: ``Divergence`` when an entry is out of sequence or this engine refuses it.
    private func applyCommitted(_ entries: [JournalEntry]) throws {
        let state = state.value
        for entry in entries where entry.seq > state.lastSeq {
            guard entry.seq == state.lastSeq + 1 else {
                throw Divergence(description: "journal entry \(entry.seq) follows \(state.lastSeq): entries are missing")
            }
            notePresenceChange(entry.command)
            switch state.engine.apply(entry.command, at: entry.at) {
            case .failure(let error):
                throw Divergence(description: "journal entry \(entry.seq) (\(CommandCodec.op(entry.command))) was refused here: \(error)")
            case .success(let outcome):
                let shared = share(outcome, of: entry.command)
                _ = journal(entry.command, shared)
                for (event, encoded) in shared { fanOut(event, encoded, sinks: state.sinks) }
            }
        }
    }

    /// Writes everything pending in one transaction (or releases it at once when nothing is durable).
    private func startCommit() {
        let state = state.value
        guard !state.pending.isEmpty else {
            for promise in state.drained { promise.succeed() }
            state.drained = []
            return
        }
        let batchItems = state.pending
        state.pending = []
        let entries = batchItems.compactMap(\.entry)
        if entries.isEmpty {
            release(batchItems)
            return
        }
        let batch = CommitBatch(entries: entries, footprint: state.footprint, engine: state.engine)
        state.footprint = StateFootprint()
        state.committing = true
        let started = NIODeadline.now()
        let store = self.store
        let items = UnsafeTransfer(batchItems)
        writer.runIfActive(eventLoop: engineLoop) { try store.commit(batch) }.whenComplete { result in
            let state = self.state.value
            state.committing = false
            switch result {
            case .success:
                self.metrics.committed(batchSize: entries.count, seconds: Double((NIODeadline.now() - started).nanoseconds) / 1e9)
                self.release(items.wrappedValue)
                self.startCommit()
            case .failure(let error):
                let storageError = (error as? StorageError) ?? .commitFailed(reason: "\(error)")
                self.fail(with: storageError, items: items.wrappedValue)
            }
        }
    }

    /// Completes replies and fans out events, in apply order.
    private func release(_ items: [Pending]) {
        let state = state.value
        for item in items {
            item.complete(item.outcome)
            for (event, shared) in item.events { fanOut(event, shared, sinks: state.sinks) }
        }
    }

    private func fail(with error: StorageError, items: [Pending]) {
        let state = state.value
        state.failed = error
        state.accepting = false
        accepting.withLockedValue { $0 = false }
        logger.critical("storage failed; refusing further commands", metadata: ["error": "\(error)"])
        // Everything applied after the last durable commit fails, reads and connection commands
        // included: they saw state that never became durable.
        for item in items + state.pending { item.complete(.failure(.storage(error))) }
        state.pending = []
        for promise in state.drained { promise.succeed() }
        state.drained = []
        onFatalError(error)
    }

    // MARK: Fan-out

    /// Sends one event to its recipients: grouped by event loop, one hop per loop, recipients in the
    /// core's order.
    private func fanOut(_ event: ReceiptsEvent, _ shared: SharedEvent, sinks: [String: any EventSink]) {
        var byLoop: [ObjectIdentifier: (any EventLoop, [(any EventSink, UnreadCounts?)])] = [:]
        for recipient in event.recipients {
            guard let sink = sinks[recipient.connectionID] else { continue }
            let key = ObjectIdentifier(sink.eventLoop)
            if byLoop[key] == nil { byLoop[key] = (sink.eventLoop, []) }
            byLoop[key]!.1.append((sink, recipient.counts))
        }
        metrics.fannedOut(type: shared.type, recipients: event.recipients.count)
        switch event.payload {
        case .messageRead(let user, _, _) where !user.privacy.readReceipts: metrics.suppressedByPrivacy.increment()
        case .messageDelivered(let user, _, _) where !user.privacy.deliveryReceipts: metrics.suppressedByPrivacy.increment()
        default: break
        }
        for (_, (loop, targets)) in byLoop {
            let transfer = UnsafeTransfer(targets)
            let compression = self.compression
            loop.execute {
                FanOutFrames.deliver(shared, to: transfer.wrappedValue, compression: compression)
            }
        }
    }

    // MARK: Live trace

    /// Starts sending `subscriber` the trace lines of every command applied from now on, after a
    /// first line `{"kind":"start","at":...}` that says from when.
    public func addTraceSubscriber(_ subscriber: TraceSubscriber) {
        engineLoop.execute {
            self.state.value.traceSubscribers[subscriber.id] = subscriber
            var w = JSONWriter()
            w.beginObject()
            w.field("kind", "start")
            w.field("at", WallClock.now())
            w.endObject()
            subscriber.send([w.bytes])
        }
    }

    public func removeTraceSubscriber(id: String) {
        engineLoop.execute { self.state.value.traceSubscribers[id] = nil }
    }

    // MARK: Retention

    /// Removes journal history `policy` no longer keeps, on the writer thread (between commits).
    public func prune(_ policy: RetentionPolicy) -> EventLoopFuture<(entries: Int, events: Int)> {
        let store = self.store
        return writer.runIfActive(eventLoop: engineLoop) { try store.prune(policy, now: WallClock.now()) }
    }

    // MARK: Shutdown

    /// Stops accepting commands (disconnects still run), then completes once every pending commit is
    /// durable.
    public func drain() async {
        let promise = engineLoop.makePromise(of: Void.self)
        engineLoop.execute {
            let state = self.state.value
            state.accepting = false
            self.accepting.withLockedValue { $0 = false }
            if !state.committing && state.pending.isEmpty && state.queued.isEmpty {
                promise.succeed()
            } else {
                state.drained.append(promise)
            }
        }
        try? await promise.futureResult.get()
    }

    /// Drains, then closes storage, the trace being recorded and the writer thread.
    public func close() async {
        await drain()
        try? await engineLoop.submit { self.state.value.poll?.cancel() }.get()
        if let recorder = self.recorder { try? await engineLoop.submit { recorder.close() }.get() }
        store.close()
        try? await writer.shutdownGracefully()
    }
}

/// Hands a value to another thread when the code guarantees only one side uses it at a time (the
/// engine loop hands sinks and completions to their own loops).
struct UnsafeTransfer<Value>: @unchecked Sendable {
    var wrappedValue: Value
    init(_ value: Value) { wrappedValue = value }
}
