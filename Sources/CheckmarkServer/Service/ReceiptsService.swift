import CCheckmarkMemory
import CheckmarkCore
import CheckmarkStorage
import CheckmarkWebSocket
import CheckmarkWire
import CoreMetrics
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// The receipts engine behind a durable group commit. Commands are applied one at a time on a single
/// engine event loop; every command that changed durable state joins the next batch, and a batch is
/// written in one transaction while the engine goes on applying. A command's reply and its events are
/// released only when its batch is durable, in the order the commands were applied; a query's answer
/// waits for every command applied before it. When a commit fails, every waiting command fails with
/// ``ServiceError/storage(_:)``, the service refuses further commands and reports it through
/// `onFatalError`, and the server stops: memory and disk may disagree, and a restart reloads the truth.
/// A cluster node instead disconnects its clients (`onStorageLost`), reconnects to its database and
/// reloads the state from it, and takes commands again, without a restart.
/// These rules are ``CommitSequencer``'s; this type applies commands and carries out its actions.
///
/// Over a ``SharedReceiptsStore`` (a cluster of nodes on one PostgreSQL database) the order is the
/// database's: each command waits for the next commit cycle, which takes the journal's append lock,
/// applies what other nodes committed since this node last looked (and sends those events to this
/// node's connections), then applies the waiting commands and commits them. Watches, queries and
/// connection changes wait for a cycle too, without the lock, so that a client sees on any node
/// everything committed before it asked. Other nodes' commits are picked up when PostgreSQL notifies
/// them, and at least every ``clusterPollInterval`` in case a notification was lost.
package final class ReceiptsService: Sendable {
    /// How often a cluster node looks for other nodes' commits without being notified.
    package static let clusterPollInterval = TimeAmount.seconds(1)
    /// How long a cluster node waits, after hearing of another node's commit while no cycle is under
    /// way, before a cycle reads it: commands arriving meanwhile go in that same cycle, and so do
    /// commits heard of meanwhile. What the notified commit's events reach here later by at most this.
    static let catchUpDelay = TimeAmount.milliseconds(2)
    /// The journal reader thread's nice value (Linux): above the other threads', so that replays take
    /// the processor only when live traffic leaves it.
    static let journalReaderNice: Int32 = 10
    /// How long a cluster node waits for the node holding a connection to answer a command for it
    /// (``PeerMessage``); with no answer, the connection does not exist (`unknown_connection`).
    package static let peerAnswerTimeout = TimeAmount.seconds(1)
    /// This node's name among the cluster's nodes (random, per start).
    let nodeID: String
    package let engineLoop: any EventLoop
    private let store: any ReceiptsStore
    private let local: LocalCommitDriver
    /// The cluster's side of this node when the store is shared by a cluster; nil for a single node.
    private let cluster: ClusterCommitDriver?
    /// The shards this node owns, when the store is shared by a cluster; nil for a single node.
    private let leases: ShardLeaseDriver?
    private let leaseStore: (any ShardLeaseStore)?
    private let writer: NIOThreadPool
    /// Reads replays' pages from the journal, one at a time, beside the writer's commits.
    private let journalReader: NIOThreadPool
    private let state: NIOLoopBoundBox<State>
    private let metrics: ServiceMetrics
    private let logger: Logger
    private let onFatalError: @Sendable (StorageError) -> Void
    /// How fanned-out frames are compressed for connections that share compression.
    let compression: PerMessageDeflateConfiguration
    private let fanOut: EventFanOut
    /// Changes what the engine decided before it is stored and sent: only for proving that the replay
    /// diff catches a build whose rules differ (`checkmark replay run` tests). Nil in production.
    private let alteration: (@Sendable (inout ReceiptsOutcome) -> Void)?

    /// How an applied command or query is completed once the sequencer releases it.
    struct Completion {
        var complete: (Result<ReceiptsOutcome, ServiceError>) -> Void
        var outcome: Result<ReceiptsOutcome, ServiceError>
    }

    typealias Sequencer = CommitSequencer<JournalEntry, (ReceiptsEvent, SharedEvent), Completion, () -> Void>

    private final class State {
        var engine: ReceiptsEngine
        var lastSeq: Int64
        var lastEventSeq: Int64
        var channelSeqs: [ChannelCID: Int64]
        /// Each journal stream's last number, by ``JournalStream/rawValue``.
        var streamSeqs: [Int64]
        /// How this node numbers the entries and events it commits (``JournalNumbering``).
        let numbering: JournalNumbering
        /// How many events this node journaled or applied from others' entries since it started.
        var eventsSeen: Int64 = 0
        var sequencer: Sequencer
        var footprint = StateFootprint()
        /// The shards this node served when the cycle under way began, at their epochs: its commands
        /// of them are committed fenced at those (a drain begun meanwhile ends after the cycle).
        var cycleFence: [ShardID: Int64] = [:]
        /// Cycles begun since the node started, whether a catch-up waits for ``catchUpDelay``, and
        /// how many cycles had begun when the last commit was heard of.
        var cyclesStarted = 0
        var catchUpScheduled = false
        var cyclesAtLastCatchUpRequest = 0
        /// The message counts per channel the cycle's batch stores (a cluster node's, until it commits).
        var cycleStoredMessages: [ChannelCID: Int] = [:]
        /// The edits the cycle's batch stores (``CommitBatch/storedEdits``).
        var cycleStoredEdits: [ChannelCID: [Int: Int]] = [:]
        /// This node's open connections, at their handles' slots.
        var connections: [OpenConnection] = []
        /// Channel states' lists kept encoded for the next watch or query of the same channel.
        var fragments: ChannelStateFragments
        /// Users as recent events wrote them, for the next event of the same user.
        var userJSON = UserJSONCache()
        /// Channel objects as recent events wrote them, for the next event of the same channel.
        var channelJSON = ChannelJSONCache()
        /// The channel objects the journal keeps once, for the next event that carries the same bytes.
        var channelObjects = ChannelObjectLedger()
        /// Who is shown typing where, for the stops a closing connection owes (typing and custom events).
        var signals = ChannelSignals()
        let tracer: CommandTracer
        var drained: [EventLoopPromise<Void>] = []
        /// Commands and reads waiting for archived texts (``readArchived(_:next:)``), which a drain
        /// waits for: they were admitted before it.
        var archiveReads = 0
        var drainAfterArchiveReads = false
        /// Whether dormant channels are being loaded (``loadChannels(_:then:)``); work that comes
        /// meanwhile waits in `heldForLoads`, in order, so that nothing overtakes what waits for them.
        var loadingChannels = false
        var heldForLoads: [() -> Void] = []
        /// Each channel's newest messages that keep their texts in memory (`message_window`).
        let messageWindow: Int
        /// Loaded channels that go back to storage once idle (`channel_idle_timeout`); nil keeps them.
        var idleChannels: IdleChannels?
        var idleSweep: RepeatedTask?
        /// A sweep came while channels or texts were being read for admitted work: it runs once they are back.
        var idleSweepPutOff = false
        /// The rows of the batch being committed (the batch after it is `footprint`): a channel with
        /// rows in either is not yet as storage holds it, and stays resident.
        var committingFootprint = StateFootprint()

        init(_ stored: StoredState, settings: StateSettings, tracer: CommandTracer) {
            fragments = ChannelStateFragments(budgetBytes: settings.channelStateCacheBytes)
            messageWindow = settings.messageWindow
            engine = ReceiptsEngine(restoring: stored.snapshot)
            engine.messageWindow = settings.messageWindow
            engine.markAllMessagesDurable()
            engine.maxWatchedChannelsPerConnection = settings.maxWatchedChannelsPerConnection
            engine.maxConnectionsPerUser = settings.maxConnectionsPerUser
            engine.maxUserProfileBytes = settings.maxUserProfileBytes
            engine.maxReactionsPerUser = settings.maxReactionsPerUser
            lastSeq = stored.lastSeq
            lastEventSeq = stored.lastEventSeq
            channelSeqs = stored.channelSeqs
            streamSeqs = stored.streamSeqs
            numbering = stored.numbering
            sequencer = Sequencer(mode: settings.mode)
            self.tracer = tracer
        }
    }

    /// What a state is built with besides what storage holds: kept to build it again when a cluster
    /// node reloads from the database.
    private struct StateSettings {
        var mode: Sequencer.Mode
        var maxWatchedChannelsPerConnection: Int
        var maxConnectionsPerUser: Int
        var maxUserProfileBytes: Int
        var maxReactionsPerUser: Int
        var messageWindow: Int
        var channelStateCacheBytes: Int
    }
    private let settings: StateSettings
    /// Cluster: called when the database failed and this node's clients must go (their state here is
    /// about to be reloaded).
    private let onStorageLost: @Sendable (StorageError) -> Void
    /// A drain was asked: a reload after a failure no longer takes place.
    private let stopping = NIOLockedValueBox(false)
    /// How long a cluster node waits for a shard's owner to answer a command forwarded to it before
    /// failing it as retryable (`storage_unavailable`).
    static let forwardAnswerTimeout = TimeAmount.seconds(5)

    /// How long a stopping cluster node tries to hand its shards back before letting their leases run out.
    static let leaseHandOverTimeout = TimeAmount.seconds(2)

    /// How long a cluster node waits between attempts to reach its database again after a failure.
    package static let storageRetryInterval = TimeAmount.seconds(1)

    /// Loads the state from `store` and starts serving on `engineLoop`. `maxWatchedChannelsPerConnection`
    /// bounds the watches of one connection however they come (socket or REST), `maxConnectionsPerUser`
    /// the connections one user has open on this node; `channelStateCacheBytes`
    /// bounds the channel-state lists kept encoded (``ChannelStateFragments``); `messageWindow` is
    /// how many of each channel's newest messages keep their texts in memory (``MessageLog``);
    /// `channelIdleTimeout`, when set, how long a loaded channel stays in memory with no watcher and no
    /// change before it goes back to storage (``IdleChannels``; a single node's only: a cluster node
    /// holds every channel).
    package static func start(
        store: any ReceiptsStore, engineLoop: any EventLoop, metrics: ServiceMetrics, logger: Logger,
        maxWatchedChannelsPerConnection: Int = .max, maxConnectionsPerUser: Int = .max,
        maxUserProfileBytes: Int = ReceiptsEngine.defaultMaxUserProfileBytes,
        maxReactionsPerUser: Int = ReceiptsEngine.defaultMaxReactionsPerUser,
        messageWindow: Int = ReceiptsEngine.defaultMessageWindow,
        channelStateCacheBytes: Int = ChannelStateFragments.defaultBudgetBytes,
        channelIdleTimeout: TimeAmount? = nil,
        shardLease: Duration = ShardLeases.Settings().leaseDuration,
        peerLink: PeerLinkSettings? = nil,
        compression: PerMessageDeflateConfiguration = .init(), recorder: TraceRecorder? = nil,
        alteration: (@Sendable (inout ReceiptsOutcome) -> Void)? = nil,
        onFatalError: @escaping @Sendable (StorageError) -> Void = { _ in },
        onStorageLost: @escaping @Sendable (StorageError) -> Void = { _ in }
    ) async throws -> ReceiptsService {
        let writer = NIOThreadPool(numberOfThreads: 1)
        writer.start()
        // A single node leaves every channel in storage until first needed; a cluster node applies
        // every node's commands as they come and so holds every channel.
        let dormant = !(store is any SharedReceiptsStore)
        let settings = StateSettings(
            mode: dormant ? .local : .cluster, maxWatchedChannelsPerConnection: maxWatchedChannelsPerConnection,
            maxConnectionsPerUser: maxConnectionsPerUser, maxUserProfileBytes: maxUserProfileBytes, maxReactionsPerUser: maxReactionsPerUser,
            messageWindow: messageWindow,
            channelStateCacheBytes: channelStateCacheBytes)
        let service: ReceiptsService
        do {  // the loaded rows live no longer than this scope
            let stored = try await writer.runIfActive { dormant ? try store.loadDormant() : try store.load(messageWindow: messageWindow) }
            service = try await engineLoop.submit {
                ReceiptsService(
                    store: store, engineLoop: engineLoop, writer: writer, stored: stored, settings: settings, metrics: metrics,
                    logger: logger, shardLease: shardLease, linkSecret: peerLink?.secret, compression: compression, recorder: recorder,
                    alteration: alteration, onFatalError: onFatalError, onStorageLost: onStorageLost)
            }.get()
        }
        // The load's rows are gone once the engine holds the state: their memory goes back to the
        // system (glibc keeps freed memory mapped otherwise).
        try await writer.runIfActive { _ = checkmark_return_free_memory() }
        if let cluster = service.cluster {
            if let peerLink {
                let server: PeerLinkServer
                do {
                    server = try await PeerLinkServer.start(host: peerLink.host, port: peerLink.port, secret: peerLink.secret,
                                                            on: engineLoop, logger: logger) { text in cluster.receiveLinked(text, service: service) }
                } catch {
                    await service.close()
                    throw PeerLinkServer.CannotListen(address: "\(peerLink.host):\(peerLink.port)", reason: "\(error)")
                }
                service.linkServer.withLockedValue { $0 = server }
                let port = server.localAddress?.port ?? peerLink.port
                cluster.acceptLinks(at: peerLink.host.contains(":") ? "[\(peerLink.host)]:\(port)" : "\(peerLink.host):\(port)")
            }
            try await engineLoop.submit {
                cluster.join(service)
                // Nothing of a draining shard is committed after the cycle under way: the shard's
                // commands are no longer fenced as its owner's from the next cycle on.
                service.leases?.start { _, drained in service.schedule(lock: .none, drained) }
            }.get()
        } else if let channelIdleTimeout, channelIdleTimeout.nanoseconds > 0 {
            try await engineLoop.submit { service.startIdleSweep(after: channelIdleTimeout) }.get()
        }
        return service
    }

    private init(store: any ReceiptsStore, engineLoop: any EventLoop, writer: NIOThreadPool, stored: StoredState,
                 settings: StateSettings, metrics: ServiceMetrics, logger: Logger, shardLease: Duration, linkSecret: String?,
                 compression: PerMessageDeflateConfiguration,
                 recorder: TraceRecorder?, alteration: (@Sendable (inout ReceiptsOutcome) -> Void)?,
                 onFatalError: @escaping @Sendable (StorageError) -> Void, onStorageLost: @escaping @Sendable (StorageError) -> Void) {
        let nodeID = String(UInt64.random(in: 1...UInt64.max), radix: 36)
        self.nodeID = nodeID
        self.compression = compression
        self.alteration = alteration
        self.store = store
        self.engineLoop = engineLoop
        self.writer = writer
        journalReader = NIOThreadPool(numberOfThreads: 1)
        journalReader.start()
        #if os(Linux)
        // Replays yield the processor to live traffic: the reader runs at a lower priority (nice 10)
        // than the engine loop, the writer and the connections' loops. Linux keeps it per thread, and
        // `who` 0 is the calling thread.
        journalReader.submit { _ in _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.journalReaderNice) }
        #endif
        local = LocalCommitDriver(store: store, writer: writer, engineLoop: engineLoop)
        let cluster = (store as? any SharedReceiptsStore).map {
            ClusterCommitDriver(shared: $0, nodeID: nodeID, writer: writer, engineLoop: engineLoop, metrics: metrics, logger: logger,
                                linkSecret: linkSecret)
        }
        self.cluster = cluster
        let leaseStore = (store as? any SharedReceiptsStore)?.makeShardLeaseStore()
        self.leaseStore = leaseStore
        leases = leaseStore.map {
            ShardLeaseDriver(store: $0, nodeID: nodeID, settings: ShardLeases.Settings(leaseDuration: shardLease, renewInterval: shardLease / 5),
                             engineLoop: engineLoop, metrics: metrics, logger: logger)
        }
        self.settings = settings
        self.state = NIOLoopBoundBox(State(stored, settings: settings, tracer: CommandTracer(recorder: recorder, logger: logger)),
                                     eventLoop: engineLoop)
        self.onStorageLost = onStorageLost
        self.metrics = metrics
        fanOut = EventFanOut(metrics: metrics, compression: compression)
        self.logger = logger
        self.onFatalError = onFatalError
    }

    /// How many events this node's engine has sequenced (the last event sequence); read on the
    /// engine loop.
    var journaledEvents: Int64 { state.value.eventsSeen }

    /// Whether commands are accepted and storage is healthy (`/readyz`).
    package var isReady: Bool { store.isReady && accepting.withLockedValue { $0 } }
    private let accepting = NIOLockedValueBox(true)
    /// Cluster: where other nodes' direct links come in (`peer_link`), if anywhere.
    private let linkServer = NIOLockedValueBox<PeerLinkServer?>(nil)

    /// The engine as of now (on the engine loop).
    var engine: ReceiptsEngine { state.value.engine }

    // MARK: Commands

    /// Applies `command` now and completes once it is durable (or refused). For `.connect`, `sink`
    /// starts receiving the connection's events.
    package func submit(_ command: ReceiptsCommand, sink: (any EventSink)? = nil) -> EventLoopFuture<ReceiptsOutcome> {
        let promise = engineLoop.makePromise(of: ReceiptsOutcome.self)
        let sinkBox = sink.map { UnsafeTransfer($0) }
        engineLoop.execute {
            self.submit(command, sink: sinkBox?.wrappedValue, applied: nil) { result in
                switch result {
                case .success(let outcome): promise.succeed(outcome)
                case .failure(let error): promise.fail(error)
                }
            }
        }
        return promise.futureResult
    }

    /// Applies `command` now and, once it is durable, answers with the REST answer `answer` makes
    /// of its outcome and the engine's state after it (as ``read(_:)`` would give it). A cluster
    /// node that applied the command itself answers as the command's cycle commits, from the state
    /// that cycle made durable; a command forwarded to its shard's owner is answered with the answer
    /// the owner made as its own cycle committed. Only when neither can be made (a refusal, an
    /// answer too large for a peer message) is the state read as any query reads it.
    package func submit(_ command: ReceiptsCommand, answer: CommandAnswer) -> EventLoopFuture<[UInt8]> {
        let promise = engineLoop.makePromise(of: [UInt8].self)
        engineLoop.execute {
            let readAfter: (Result<ReceiptsOutcome, ServiceError>) -> Void = { result in
                switch result {
                case .success(let outcome): self.read { engine in try answer.body(outcome, engine: engine) }.cascade(to: promise)
                case .failure(let error): promise.fail(error)
                }
            }
            guard self.cluster != nil else { return self.submit(command, sink: nil, applied: nil, complete: readAfter) }
            let atReply: (Result<ReceiptsOutcome, ServiceError>) -> Void = { result in
                // A cluster releases a cycle's replies before anything else is applied: the engine
                // holds exactly what is durable.
                guard case .success(let outcome) = result, let body = try? answer.body(outcome, engine: self.engine) else {
                    return readAfter(result)
                }
                promise.succeed(body)
            }
            if self.forwardToOwner(command, answering: answer, complete: { result, body in
                guard let body, case .success = result else { return readAfter(result) }
                promise.succeed(Array(body.utf8))
            }) { return }
            self.submit(command, sink: nil, applied: atReply, complete: readAfter)
        }
        return promise.futureResult
    }

    /// Applies `command` (on the engine loop): forwarded to its shard's owner or to the node holding
    /// its connection, or applied here. `complete` gets its result; `applied`, when given, gets it
    /// instead when this node applied the command itself.
    private func submit(_ command: ReceiptsCommand, sink: (any EventSink)?,
                        applied: ((Result<ReceiptsOutcome, ServiceError>) -> Void)?,
                        complete: @escaping (Result<ReceiptsOutcome, ServiceError>) -> Void) {
        if forwardToOwner(command, answering: nil, complete: { result, _ in complete(result) }) { return }
        let sinkBox = sink.map { UnsafeTransfer($0) }
        schedule(lock: appendLock(for: command)) {
            if let cluster = self.cluster, let connectionID = PeerMessage.isForwardable(command),
               self.state.value.engine.connections[connectionID] == nil {
                return cluster.askPeers(command, connectionID: connectionID, complete: complete)
            }
            self.apply(command, sink: sinkBox?.wrappedValue, complete: applied ?? complete)
        }
    }

    /// Cluster: sends `command` to the node that owns its shard, when another node does, and
    /// completes it with that node's answer; false when this node applies it itself (it owns the
    /// shard, or nobody does as far as it knows, or the command is too large to forward, or this
    /// node would not hear the answer: its notification connection is down). A command
    /// the owner no longer owns the shard of is applied here after all, in a cycle that holds the
    /// journal's append lock alone (``appendLock(for:)``).
    /// `complete` gets the REST answer `answering` asks for too, when the owner made it.
    private func forwardToOwner(_ command: ReceiptsCommand, answering: CommandAnswer?,
                                complete: @escaping (Result<ReceiptsOutcome, ServiceError>, String?) -> Void) -> Bool {
        guard let cluster, let leases, case .owner(let shard) = CommandRoute(command), leases.epoch(serving: shard) == nil,
              let owner = leases.owner(of: shard), owner != nodeID, cluster.shared.isListening,
              state.value.sequencer.admission(isDisconnect: false) == nil else {
            return false
        }
        let forwarded = cluster.forward(command, to: owner, answering: answering) { answer, body in
            switch answer {
            case .notOwner?:
                self.schedule(lock: .exclusive) { self.apply(command, sink: nil) { complete($0, nil) } }
            case let answer?:
                complete(answer.outcome(of: command), body)
            case nil:
                complete(.failure(.storage(.unavailable(
                    reason: "the owner of \(shard) did not answer within \(Self.forwardAnswerTimeout.nanoseconds / 1_000_000_000) s"))), nil)
            }
        }
        if forwarded { metrics.commandsForwarded.increment() }
        return forwarded
    }

    /// Cluster: applies a command another node forwarded because this node owns its shard, and
    /// answers once it is durable (or refused); ``ForwardAnswer/notOwner`` when this node does not
    /// serve the shard (any more).
    /// With `answering`, the answer carries the REST answer made from the state the command's commit
    /// left (nil when it cannot be made from it: the asking node then reads it itself).
    func applyForwarded(_ command: ReceiptsCommand, answering: CommandAnswer?, answer: @escaping (ForwardAnswer, String?) -> Void) {
        schedule(lock: appendLock(for: command)) {
            // Not serving it, or not taking commands (storage failed, reloading, stopping): the asking
            // node applies it itself.
            guard case .owner(let shard) = CommandRoute(command), self.leases?.epoch(serving: shard) != nil,
                  self.state.value.sequencer.admission(isDisconnect: false) == nil else {
                return answer(.notOwner, nil)
            }
            self.apply(command, sink: nil) { result in
                // Released as the command's cycle commits, before anything else is applied: the
                // engine holds exactly what is durable.
                var body: String?
                if let answering, case .success(let outcome) = result,
                   let bytes = try? answering.body(outcome, engine: self.engine) {
                    body = String(decoding: bytes, as: UTF8.self)
                }
                answer(ForwardAnswer(result), body)
            }
        }
    }

    /// Reads the engine's state as of every command submitted before, once those are durable. When
    /// the commit of a command before it fails, the read fails too (`storage_unavailable`): what it
    /// saw was never durable and is never served.
    package func read<T: Sendable>(_ body: @escaping @Sendable (ReceiptsEngine) throws -> T) -> EventLoopFuture<T> {
        readChannelStates { engine, _, _ in try body(engine) }
    }

    /// Reads the engine's state as ``read(_:)`` does, with the lists of channel states kept encoded
    /// (``ChannelStateFragments``) for `body` to write channel states with, and the archived texts
    /// its pages need (``ArchivedTexts``): when `body` throws ``ArchivedTexts/Missing``, they are read
    /// from storage on the journal reader's thread (not the engine loop) and `body` runs again, in
    /// order with the commands as it would have; each time it asks for texts not read yet (an
    /// archived text changes only by an edit, whose new text is held until storage has it, and pages
    /// only move to newer messages, which are held), so it ends. Storage that cannot give them back fails the read (`storage_unavailable`), released in
    /// order with the commands before it.
    package func readChannelStates<T: Sendable>(
        _ body: @escaping @Sendable (ReceiptsEngine, inout ChannelStateFragments, ArchivedTexts) throws -> T
    ) -> EventLoopFuture<T> {
        let promise = engineLoop.makePromise(of: T.self)
        engineLoop.execute { self.read(body, archived: ArchivedTexts(), promise: promise) }
        return promise.futureResult
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (ReceiptsEngine, inout ChannelStateFragments, ArchivedTexts) throws -> T,
                                   archived: ArchivedTexts, loaded: Set<ChannelCID> = [], promise: EventLoopPromise<T>) {
        schedule(lock: .none) {
            let state = self.state.value
            // After a failed commit the engine holds what never became durable: nothing is read from it.
            if let failed = state.sequencer.failure { return promise.fail(ServiceError.storage(failed)) }
            var value = Result { try body(state.engine, &state.fragments, archived) }
            if case .failure(ReceiptsError.channelsNotLoaded(let cids)) = value, !loaded.isSuperset(of: cids) {
                return self.loadChannels(cids) { result in
                    switch result {
                    case .success: self.read(body, archived: archived, loaded: loaded.union(cids), promise: promise)
                    case .failure(let error): self.release(Result<T, any Error>.failure(ServiceError.storage(error)), to: promise)
                    }
                }
            }
            if case .failure(let missing as ArchivedTexts.Missing) = value {
                guard archived.lacksAny(of: missing) else {
                    value = .failure(ServiceError.storage(.unavailable(reason: "archived messages were read and are still missing")))
                    return self.release(value, to: promise)
                }
                return self.readArchived(missing) { result in
                    switch result {
                    case .success(let texts): self.read(body, archived: archived.adding(texts), loaded: loaded, promise: promise)
                    case .failure(let error): self.release(Result<T, any Error>.failure(ServiceError.storage(error)), to: promise)
                    }
                }
            }
            self.release(value, to: promise)
        }
    }

    /// Completes `promise` with `value` once everything applied before is durable (as a query's answer).
    private func release<T: Sendable>(_ value: Result<T, any Error>, to promise: EventLoopPromise<T>) {
        carryOut(state.value.sequencer.applied(entry: nil, events: [], token: Completion(complete: { outcome in
            switch outcome {
            case .success: promise.completeWith(value)
            case .failure(let error): promise.fail(error)
            }
        }, outcome: .success(.unchanged))))
    }

    /// Reads the texts `missing` names on the journal reader's thread and hands them (or why storage
    /// could not give them all back) to `next` on the engine loop. While it reads, a drain waits for it
    /// (``drain()``).
    private func readArchived(_ missing: ArchivedTexts.Missing, next: @escaping (Result<ArchivedTexts, StorageError>) -> Void) {
        let store = self.store
        state.value.archiveReads += 1
        journalReader.runIfActive(eventLoop: engineLoop) { () throws -> ArchivedTexts in
            var texts = ArchivedTexts()
            for (cid, positions) in missing.positions {
                let read = try store.archivedTexts(cid, positions: positions)
                guard read.count == Set(positions).count else {
                    throw StorageError.unavailable(reason: "archived messages of \(cid) are missing from storage")
                }
                for (position, text) in read { texts.insert(text, of: cid, at: position) }
            }
            return texts
        }
        .assumeIsolated().whenComplete { result in
            next(result.mapError { ($0 as? StorageError) ?? .unavailable(reason: "\($0)") })
            self.endArchiveRead()
        }
    }

    /// A read of archived texts or a load of channels ended: a drain asked meanwhile, or a sweep of
    /// idle channels put off meanwhile, goes on once the last one has.
    private func endArchiveRead() {
        let state = state.value
        state.archiveReads -= 1
        guard state.archiveReads == 0 else { return }
        if state.drainAfterArchiveReads {
            state.drainAfterArchiveReads = false
            carryOut(state.sequencer.drainRequested())
        }
        if state.idleSweepPutOff {
            state.idleSweepPutOff = false
            sweepIdleChannels()
        }
    }

    /// The channels storage holds a message of this id in (``ReceiptsStore/channels(holdingMessage:)``),
    /// asked on the journal reader's thread without loading any; what storage cannot answer fails it
    /// (`storage_unavailable`).
    package func channels(holdingMessage id: String) -> EventLoopFuture<[ChannelCID]> {
        let store = self.store
        let logger = self.logger
        return journalReader.runIfActive(eventLoop: engineLoop) { try store.channels(holdingMessage: id) }
            .flatMapErrorThrowing { error in
                let failure = (error as? StorageError) ?? .unavailable(reason: "\(error)")
                logger.error("a message could not be looked for in storage", metadata: ["error": "\(failure)"])
                throw ServiceError.storage(failure)
            }
    }

    /// Loads the dormant channels `cids` on the journal reader's thread and installs them in the
    /// engine, then calls `next` on the engine loop, before any work that came meanwhile (held until
    /// then, in order: nothing overtakes what waits for a channel). A channel storage does not have
    /// fails it (`storage_unavailable`). While it loads, a drain waits for it.
    private func loadChannels(_ cids: [ChannelCID], then next: @escaping (Result<Void, StorageError>) -> Void) {
        let store = self.store
        let window = state.value.messageWindow
        let started = NIODeadline.now()
        state.value.loadingChannels = true
        state.value.archiveReads += 1
        journalReader.runIfActive(eventLoop: engineLoop) { () throws -> [CheckmarkCore.Channel] in
            try cids.map { cid in
                guard let channel = try store.loadChannel(cid, messageWindow: window) else {
                    throw StorageError.unavailable(reason: "channel \(cid) is missing from storage")
                }
                return channel
            }
        }
        .assumeIsolated().whenComplete { result in
            let state = self.state.value
            switch result {
            case .success(let channels):
                let now = Self.monotonicMilliseconds()
                for channel in channels {
                    guard state.engine.install(channel) else { continue }
                    state.idleChannels?.loaded(channel.cid, activity: state.channelSeqs[channel.cid] ?? 0, at: now)
                    self.metrics.channelLoads.increment()
                }
                self.logger.debug("channels loaded", metadata: [
                    "channels": "\(cids.map(\.description).joined(separator: ","))",
                    "messages": "\(channels.reduce(0) { $0 + $1.messages.count })",
                    "ms": "\((NIODeadline.now() - started).nanoseconds / 1_000_000)",
                ])
            case .failure(let error):
                self.logger.error("channels could not be loaded", metadata: [
                    "channels": "\(cids.map(\.description).joined(separator: ","))", "error": "\(error)",
                ])
            }
            state.loadingChannels = false
            next(result.map { _ in () }.mapError { ($0 as? StorageError) ?? .unavailable(reason: "\($0)") })
            // What came meanwhile, in order, until one of it waits for channels in turn.
            while !state.loadingChannels, !state.heldForLoads.isEmpty { state.heldForLoads.removeFirst()() }
            self.endArchiveRead()
        }
    }

    /// Makes a connection of `userID` watch `cid` (as ``submit(_:sink:)`` with `.watch`). With
    /// `resumingAfter`, the last `channel_seq` the client saw, it also plans what the connection missed:
    /// every event after that sequence up to the one at which the watch took effect, so that together
    /// with the live events that follow there is no gap and no duplicate. The journal is not read here:
    /// the connection reads the plan's pages (``readReplayPage(_:userID:expected:limit:maxBytes:on:)``) as
    /// it drains. Completes once the watch is durable-ordered (so the journal holds everything up to the
    /// plan's head); fails as the watch command does.
    package func watch(connectionID: String, userID: String, cid: ChannelCID, resumingAfter after: Int64?,
                      maxResumeEvents: Int = ChannelResume.defaultMaxEvents) -> EventLoopFuture<ChannelResume?> {
        let promise = engineLoop.makePromise(of: ChannelResume?.self)
        engineLoop.execute { self.schedule(lock: .none) {
            // A watch emits no event: the channel's sequence now is where live events will begin.
            let head = self.state.value.channelSeqs[cid] ?? 0
            let state = self.state.value
            let openedAfter = state.engine.connections.handle(of: connectionID)
                .flatMap { OpenConnection.find($0, in: state.connections) }?.openedAt ?? .unknown
            self.apply(.watch(connectionID: connectionID, cid: cid), sink: nil) { result in
                switch result {
                case .failure(let error):
                    promise.fail(error)
                case .success:
                    promise.succeed(after.map {
                        ChannelResume.plan(cid: cid, after: $0, head: head, maxEvents: maxResumeEvents, openedAt: openedAfter)
                    })
                }
            }
        } }
        return promise.futureResult
    }

    /// Reads the next page of a planned replay (``ChannelResume/Outcome/replay(openedAt:)``):
    /// the journal rows from `expected` up to the plan's head, at most `limit` of them and `maxBytes` of
    /// JSON, on the journal reader's thread, beside commits (neither the engine loop nor the writer
    /// waits for it). Completes on `eventLoop` with the page, or why the journal cannot give it (pruned
    /// meanwhile, or unreadable).
    package func readReplayPage(_ resume: ChannelResume, userID: String, expected: Int64, limit: Int, maxBytes: Int,
                                on eventLoop: any EventLoop) -> EventLoopFuture<Result<ChannelResume.Page, ChannelResume.UnavailableReplay>> {
        guard case .replay(let openedAfter) = resume.outcome else {
            return eventLoop.makeSucceededFuture(.failure(.init(reason: "the resume of channel \(resume.cid) has nothing to replay")))
        }
        let store = self.store
        return journalReader.runIfActive(eventLoop: eventLoop) {
            // Whole here, on the reader's thread: the journal keeps a message object once, in storage.
            try store.channelEvents(resume.cid, after: expected - 1, through: resume.head, limit: limit, maxBytes: maxBytes)
                .map(StreamJSON.whole)
        }
        .map { ChannelResume.page(cid: resume.cid, userID: userID, expected: expected, head: resume.head, rows: $0, openedAt: openedAfter) }
        .recover { error in .failure(.init(reason: "the journal could not be read: \(error)")) }
    }

    /// Applies `command` to the engine now (on the engine loop) and hands the result to the
    /// sequencer; `complete` is called when it releases it. Refused at once after a storage failure
    /// and, except disconnects and commands `recalled` (applied again once storage gave back an
    /// archived text they need: admitted before), while draining.
    /// `loaded`: applied again once the dormant channels it needs were loaded (admitted before too).
    func apply(_ command: ReceiptsCommand, sink: (any EventSink)?, recalled: Bool = false, loaded: Bool = false,
               complete: @escaping (Result<ReceiptsOutcome, ServiceError>) -> Void) {
        let state = state.value
        if let refusal = state.sequencer.admission(isDisconnect: Self.isDisconnect(command), admittedEarlier: recalled || loaded) {
            complete(.failure(refusal))
            return
        }
        cluster?.notePresenceChange(command, engine: state.engine)
        let closing = closingConnection(command)
        let now = Timestamp(rawValue: WallClock.now().rawValue)
        switch state.engine.apply(command, at: now) {
        case .failure(.channelsNotLoaded(let cids)) where !loaded:
            // Not a refusal: the command needs dormant channels. They are loaded off the engine loop,
            // then the command is applied again before anything that came after it.
            loadChannels(cids) { result in
                switch result {
                case .success:
                    self.apply(command, sink: sink, recalled: recalled, loaded: true, complete: complete)
                case .failure(let error):
                    self.carryOut(self.state.value.sequencer.applied(
                        entry: nil, events: [], token: Completion(complete: complete, outcome: .failure(.storage(error)))))
                }
            }
        case .failure(.archivedText(let cid, let position)) where !recalled:
            // Not a refusal: the command needs an archived text (a thread's title). Read off the engine
            // loop, then the command is applied again, in the order of what comes then (it was
            // admitted: a drain begun meanwhile waits for it).
            readArchived(ArchivedTexts.Missing(cid: cid, positions: [position])) { result in
                switch result {
                case .success(let texts):
                    if let text = texts.text(of: cid, at: position) { self.state.value.engine.recallText(text, of: cid, at: position) }
                    self.schedule(lock: self.appendLock(for: command)) {
                        self.apply(command, sink: sink, recalled: true, loaded: loaded, complete: complete)
                    }
                case .failure(let error):
                    self.schedule(lock: .none) {
                        self.carryOut(self.state.value.sequencer.applied(
                            entry: nil, events: [], token: Completion(complete: complete, outcome: .failure(.storage(error)))))
                    }
                }
            }
        case .failure(let error):
            metrics.rejected(error)
            carryOut(state.sequencer.applied(entry: nil, events: [], token: Completion(complete: complete, outcome: .failure(.rejected(error)))))
        case .success(var outcome):
            alteration?(&outcome)
            trackConnection(command, sink: sink, closing: closing)
            var entry: JournalEntry?
            let shared = share(outcome, of: command)
            state.tracer.applied(command, at: now, events: shared)
            if outcome.changed && ReceiptsEngine.isDurable(command) {
                entry = journal(command, shared)
                recordFootprint()
                metrics.accepted(command)
            }
            carryOut(state.sequencer.applied(entry: entry, events: shared, token: Completion(complete: complete, outcome: .success(outcome))))
        }
    }

    private static func isDisconnect(_ command: ReceiptsCommand) -> Bool {
        switch command {
        case .disconnect: true
        case .upsertUser, .updateUser, .createChannelType, .updateChannelType, .createChannel, .addMembers,
             .removeMembers, .connect, .watch, .stopWatching, .sendMessage, .updateMessage, .deleteMessage, .sendReaction, .deleteReaction, .markRead, .markReadMany,
             .markThreadRead, .markUnread, .markDelivered:
            false
        }
    }

    /// The handle of the connection `command` closes, looked up before the engine forgets it.
    /// (Read in place: passing the engine out of `state` copied the whole engine for every command.)
    private func closingConnection(_ command: ReceiptsCommand) -> ConnectionHandle? {
        guard case .disconnect(let connectionID) = command else { return nil }
        return state.value.engine.connections.handle(of: connectionID)
    }

    /// Opens or forgets the connection's sink once the engine accepted `command`.
    private func trackConnection(_ command: ReceiptsCommand, sink: (any EventSink)?, closing: ConnectionHandle?) {
        let state = state.value
        switch command {
        case .connect(let connectionID, _):
            guard let handle = state.engine.connections.handle(of: connectionID) else { return }
            while state.connections.count <= handle.index { state.connections.append(.empty) }
            // One node numbers every event after the last (8 bytes a connection); a cluster's nodes number
            // apart, so a cluster node notes each stream (about 2 KB, shared until its next entry).
            let opening: ConnectionOpening = cluster == nil ? .afterEvent(state.lastEventSeq) : .afterStreams(state.streamSeqs)
            state.connections[handle.index] = OpenConnection(sink: sink, openedAt: opening, serial: handle.serial)
        case .disconnect(let connectionID):
            // A connection that closes while shown typing ends it for the channel's watchers.
            let now = Timestamp(rawValue: WallClock.now().rawValue)
            for stop in state.signals.connectionClosed(connectionID, engine: state.engine, at: now) { _ = deliver(stop) }
            guard let closing, OpenConnection.find(closing, in: state.connections) != nil else { return }
            state.connections[closing.index] = .empty
        case .upsertUser, .updateUser, .createChannelType, .updateChannelType, .createChannel, .addMembers,
             .removeMembers, .watch, .stopWatching, .sendMessage, .updateMessage, .deleteMessage, .sendReaction, .deleteReaction, .markRead, .markReadMany,
             .markThreadRead, .markUnread, .markDelivered:
            break
        }
    }

    /// Gives each event its channel sequence (durable commands only) and its shared encoding.
    private func share(_ outcome: ReceiptsOutcome, of command: ReceiptsCommand) -> [(ReceiptsEvent, SharedEvent)] {
        let state = state.value
        var shared: [(ReceiptsEvent, SharedEvent)] = []
        shared.reserveCapacity(outcome.events.count)
        for var event in outcome.events {
            if cluster != nil, let cid = event.cid {
                // Watchers on every node count, not only this node's.
                event.payload = event.payload.counting(watchers: clusterWatcherCount(cid))
            }
            var channelSeq: Int64?
            if let cid = event.cid, ReceiptsEngine.isDurable(command) {
                let next = (state.channelSeqs[cid] ?? 0) + 1
                state.channelSeqs[cid] = next
                channelSeq = next
            }
            // Encoded before the pair is made, so that the event moves into it instead of being copied.
            // An event no connection here receives and no resume replays (`notification.message_new`
            // when every member's connection watches, a busy channel's usual state) is not encoded:
            // nothing would read its bytes, and it is the largest event.
            let unread = event.recipients.isEmpty && !event.isReplayable
            let encoded = SharedEvent(
                type: event.type,
                encoded: unread ? EncodedEvent(stored: [], type: event.type) : StreamJSON.encode(
                    event, channelSeq: channelSeq, users: &state.userJSON, channels: &state.channelJSON),
                cid: event.cid, channelSeq: channelSeq)
            shared.append((event, encoded))
        }
        return shared
    }

    /// The journal entry of an applied command: the next global, stream and event sequences. An event no
    /// resume replays (``EventAudience/isReplayable``: `notification.message_new`, about half of a
    /// message's journal) keeps its sequences and audience without its JSON.
    private func journal(_ command: ReceiptsCommand, _ shared: [(ReceiptsEvent, SharedEvent)]) -> JournalEntry {
        let state = state.value
        state.lastSeq = state.numbering.next(after: state.lastSeq)
        state.eventsSeen += Int64(shared.count)
        let stream = CommandRoute(command).stream
        state.streamSeqs[stream.rawValue] += 1
        var events: [JournalEvent] = []
        events.reserveCapacity(shared.count)
        for (event, encoded) in shared {
            state.lastEventSeq = state.numbering.next(after: state.lastEventSeq)
            let replayable = event.isReplayable
            events.append(JournalEvent(
                seq: state.lastEventSeq, cid: encoded.cid, channelSeq: encoded.channelSeq, type: encoded.type,
                audience: event.audience, json: replayable ? encoded.encoded.stored : [],
                message: replayable ? journaledMessage(of: event, encoded.encoded) : nil,
                channel: replayable ? journaledChannel(encoded) : nil))
        }
        return JournalEntry(seq: state.lastSeq, stream: stream, streamSeq: state.streamSeqs[stream.rawValue], at: state.engine.clock,
                            command: command, events: events, messagePosition: sentMessagePosition(command, shared))
    }

    /// Moves this node's sequences past `entry`, which another node committed and this one applied
    /// (making `eventCount` events): its stream's number as that node numbered it, and the journal's
    /// past it (this node's next entry is numbered after what it saw). Event numbers need only be
    /// unique (``JournalNumbering``): this node's own go on from where they were.
    private func followed(_ entry: JournalEntry, eventCount: Int) {
        let state = state.value
        state.lastSeq = max(state.lastSeq, entry.seq)
        state.streamSeqs[entry.stream.rawValue] = entry.streamSeq
        state.eventsSeen += Int64(eventCount)
    }

    /// The position of the message a `send_message` made (its `message.new`'s), for the journal to
    /// keep the command without the text that message's row holds.
    private func sentMessagePosition(_ command: ReceiptsCommand, _ shared: [(ReceiptsEvent, SharedEvent)]) -> Int? {
        guard case .sendMessage(let cid, _, _) = command else { return nil }
        for (event, _) in shared {
            if case .messageNew(let message, _, _) = event.payload, message.cid == cid {
                return state.value.engine.channels[cid]?.messages.position(of: message.id)
            }
        }
        return nil
    }

    /// Where a `message.new` event's message object is, for the journal to keep it once: the message
    /// is stored with the same commit (``JournaledMessage``).
    private func journaledMessage(of event: ReceiptsEvent, _ encoded: EncodedEvent) -> JournaledMessage? {
        guard case .messageNew(let message, _, _) = event.payload, let range = encoded.messageObject,
              let position = state.value.engine.channels[message.cid]?.messages.position(of: message.id) else { return nil }
        return JournaledMessage(position: position, offset: range.lowerBound, length: range.count)
    }

    /// Which stored object an event's channel object is, for the journal to keep it once for the
    /// events that carry the same bytes (``JournaledChannel``): channel events with a sequence only.
    private func journaledChannel(_ encoded: SharedEvent) -> JournaledChannel? {
        guard let range = encoded.encoded.channelObject, let cid = encoded.cid, let channelSeq = encoded.channelSeq else { return nil }
        let since = state.value.channelObjects.key(for: encoded.encoded.stored[range], of: cid, at: channelSeq)
        return JournaledChannel(since: since, offset: range.lowerBound, length: range.count)
    }

    // MARK: Footprint: what a batch rewrites besides its entries

    /// Moves the rows the engine noted while applying the last command into the next batch's.
    private func recordFootprint() {
        let state = state.value
        state.engine.takeFootprint(into: &state.footprint)
    }

    /// The batch that stores `entries` and the state they changed; starts the next footprint. The
    /// footprint must be the rows of exactly those entries: replies and events are released only
    /// through `engineLoop.execute` hops, never by applying a command synchronously from inside a
    /// release, so no later command's rows can be in it.
    private func makeBatch(_ entries: [JournalEntry]) -> CommitBatch {
        let state = state.value
        defer { state.footprint = StateFootprint() }
        if state.idleChannels != nil { state.committingFootprint = state.footprint }
        return CommitBatch(entries: entries, footprint: state.footprint, engine: state.engine)
    }

    // MARK: Sequencing

    /// What committing `command` needs of the journal's append lock in a cluster: none when it
    /// changes nothing durable; shared when it is a command of a shard this node serves (its stream
    /// is this node's alone, and its commit fenced); exclusive otherwise.
    func appendLock(for command: ReceiptsCommand) -> Sequencer.Lock {
        guard ReceiptsEngine.isDurable(command) else { return .none }
        guard let leases, case .owner(let shard) = CommandRoute(command), leases.epoch(serving: shard) != nil else { return .exclusive }
        return .shared
    }

    /// Runs `work` in order with the commits: now on a single node; in the next commit cycle in a
    /// cluster, holding the journal's append lock as `lock` says (``appendLock(for:)``).
    func schedule(lock: Sequencer.Lock, _ work: @escaping () -> Void) {
        if state.value.loadingChannels {
            state.value.heldForLoads.append { self.schedule(lock: lock, work) }
            return
        }
        // What `enqueue` would answer, without the two lists it takes to say so.
        if state.value.sequencer.runsWorkAtOnce { return work() }
        carryOut(state.value.sequencer.enqueue(work, lock: lock))
    }

    /// Performs the sequencer's actions, in order.
    private func carryOut(_ actions: consuming [Sequencer.Action]) {
        // Taken out of the list one by one, in order, so each action's parts are moved, not copied.
        actions.reverseByMoving()
        while let action = actions.popLast() {
            switch consume action {
            case .run(let works):
                for work in works { work() }
            case .write(let entries):
                write(makeBatch(entries))
            case .cycle(let lock):
                state.value.cyclesStarted += 1
                cluster?.runCycle(lock: startCycle(lock), after: state.value.streamSeqs, service: self)
            case .reply(let completion, .durable):
                completion.complete(completion.outcome)
            case .reply(let completion, .failed(let error)):
                completion.complete(.failure(.storage(error)))
            case .fanOut(let events):
                fanOut.send(events, to: state.value.connections)
            case .storageFailed(let error):
                accepting.withLockedValue { $0 = false }
                // A cluster node says so as it starts reloading (``reloadAfterStorageFailure(_:cluster:)``).
                if cluster == nil { logger.critical("storage failed; refusing further commands", metadata: ["error": "\(error)"]) }
            case .drained:
                let state = state.value
                // Not yet while admitted work waits for archived texts: it comes back after this, and
                // the drain is asked again once the last of it is back (``readArchived(_:next:)``).
                guard state.archiveReads == 0 else {
                    state.drainAfterArchiveReads = true
                    continue
                }
                for promise in state.drained { promise.succeed() }
                state.drained = []
            case .fatal(let error):
                if let cluster {
                    reloadAfterStorageFailure(error, cluster: cluster)
                } else {
                    onFatalError(error)
                }
            }
        }
    }

    /// A single node's batch: one transaction on the writer thread. Once durable, its messages' texts
    /// may leave memory (``ReceiptsEngine/markMessagesDurable(_:)``).
    private func write(_ batch: CommitBatch) {
        let started = NIODeadline.now()
        let count = batch.entries.count
        let stored = batch.storedMessageCounts
        let storedEdits = batch.storedEdits
        local.commit(batch).whenComplete { result in
            switch result {
            case .success:
                if !stored.isEmpty { self.state.value.engine.markMessagesDurable(stored) }
                if !storedEdits.isEmpty { self.state.value.engine.markEditsDurable(storedEdits) }
                self.state.value.committingFootprint = StateFootprint()
                self.metrics.committed(batchSize: count, seconds: Double((NIODeadline.now() - started).nanoseconds) / 1e9)
                self.carryOut(self.state.value.sequencer.batchCommitted())
            case .failure(let error):
                self.carryOut(self.state.value.sequencer.batchFailed((error as? StorageError) ?? .commitFailed(reason: "\(error)")))
            }
        }
    }

    // MARK: Typing and custom events

    /// Sends `signal` of `userID` in `cid` (typing, a custom event) to the watchers of the channel on
    /// this node that it reaches now, as ``ChannelSignals`` decides; `connectionID` names the sending
    /// connection (ignored unless it is the user's, open here: its close then ends the typing).
    /// Completes with the event's JSON as recipients get it. Never stored, never waits for a commit.
    /// - Throws: the refusals of ``ChannelSignals/decide(_:from:in:connectionID:engine:at:)``;
    ///   `storage_unavailable` when the dormant channel cannot be loaded or storage failed;
    ///   `shutting_down` while draining.
    package func send(_ signal: ChannelSignal, from userID: String, in cid: ChannelCID, connectionID: String?) -> EventLoopFuture<[UInt8]> {
        let promise = engineLoop.makePromise(of: [UInt8].self)
        engineLoop.execute { self.send(signal, from: userID, in: cid, connectionID: connectionID, loaded: false, promise: promise) }
        return promise.futureResult
    }

    private func send(_ signal: ChannelSignal, from userID: String, in cid: ChannelCID, connectionID: String?, loaded: Bool,
                      promise: EventLoopPromise<[UInt8]>) {
        schedule(lock: .none) {
            let state = self.state.value
            if let refusal = state.sequencer.admission(isDisconnect: false) { return promise.fail(refusal) }
            let sender = connectionID.flatMap { state.engine.connections[$0] == userID ? $0 : nil }
            let now = Timestamp(rawValue: WallClock.now().rawValue)
            do throws(ReceiptsError) {
                let delivery = try state.signals.decide(signal, from: userID, in: cid, connectionID: sender, engine: state.engine, at: now)
                promise.succeed(self.deliver(delivery))
            } catch .channelsNotLoaded(let cids) where !loaded {
                self.loadChannels(cids) { result in
                    switch result {
                    case .success: self.send(signal, from: userID, in: cid, connectionID: connectionID, loaded: true, promise: promise)
                    case .failure(let error): promise.fail(ServiceError.storage(error))
                    }
                }
            } catch {
                self.metrics.rejected(error)
                promise.fail(ServiceError.rejected(error))
            }
        }
    }

    /// Sends `delivery` to its recipients open on this node and, in a cluster, has the other nodes
    /// send it to theirs; returns its JSON.
    private func deliver(_ delivery: SignalDelivery) -> [UInt8] {
        let encoded = StreamJSON.encode(signal: delivery)
        if let suppressed = delivery.suppressed {
            metrics.signalSuppressed(suppressed)
            return encoded.stored
        }
        fanOut.send(signal: SharedEvent(type: delivery.signal.type, encoded: encoded, cid: nil, channelSeq: nil),
                    to: delivery.recipients, among: state.value.connections)
        cluster?.relay(signal: encoded.stored, type: delivery.signal.type, cid: delivery.cid, user: delivery.user.id)
        return encoded.stored
    }

    /// A typing or custom event of `type` another node of the cluster decided (`json`, as its
    /// recipients get it): sent to this node's watchers of `cid` it reaches (``ChannelSignal/reachesSender(type:)``).
    func deliverRelayed(_ json: [UInt8], type: String, cid: ChannelCID, user: String) {
        engineLoop.execute {
            let state = self.state.value
            let recipients = state.engine.signalRecipients(in: cid, excluding: ChannelSignal.reachesSender(type: type) ? nil : user)
            guard !recipients.isEmpty else { return }
            self.fanOut.send(signal: SharedEvent(type: type, encoded: EncodedEvent(stored: json, type: type), cid: nil, channelSeq: nil),
                             to: recipients, among: state.connections)
        }
    }

    // MARK: Idle channels

    /// Sweeps the resident channels every quarter of `timeout` (at most every minute), sending those
    /// idle for `timeout` back to storage.
    private func startIdleSweep(after timeout: TimeAmount) {
        let state = state.value
        state.idleChannels = IdleChannels(idleAfter: max(1, timeout.nanoseconds / 1_000_000))
        let interval = TimeAmount.nanoseconds(min(max(timeout.nanoseconds / 4, 1_000_000), 60_000_000_000))
        state.idleSweep = engineLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in self.sweepIdleChannels() }
    }

    /// Evicts the channels ``IdleChannels`` finds idle (``ReceiptsEngine/evict(_:)``): not while
    /// channels or texts are being read for admitted work (it comes back expecting them: the sweep
    /// runs once they are back, ``endArchiveRead()``), nor after a
    /// storage failure (what the engine holds may not be what storage has). A channel with rows in the
    /// batch being committed or the next one is busy. Storage forgets what it kept of the evicted
    /// channels on the thread that loads them, before any next load.
    private func sweepIdleChannels() {
        let state = state.value
        guard state.idleChannels != nil, state.sequencer.failure == nil else { return }
        guard !state.loadingChannels, state.archiveReads == 0 else {
            state.idleSweepPutOff = true
            return
        }
        let unsettled = state.footprint.channelIDs.union(state.committingFootprint.channelIDs)
        var residents: [IdleChannels.Resident] = []
        residents.reserveCapacity(state.engine.channels.count)
        for (cid, channel) in state.engine.channels {
            residents.append(IdleChannels.Resident(
                cid: cid, activity: state.channelSeqs[cid] ?? 0, busy: !channel.watchers.isEmpty || unsettled.contains(cid)))
        }
        let idle = state.idleChannels!.sweep(residents, at: Self.monotonicMilliseconds())
        var evicted: [ChannelCID] = []
        for cid in idle where state.engine.evict(cid) {
            state.fragments.forget(cid)
            evicted.append(cid)
        }
        guard !evicted.isEmpty else { return }
        metrics.channelUnloads.increment(by: Int64(evicted.count))
        logger.debug("idle channels went back to storage", metadata: [
            "channels": "\(evicted.count)", "resident": "\(state.engine.channels.count)",
        ])
        let store = self.store
        let unloaded = evicted
        journalReader.submit { _ in
            store.unloaded(unloaded)
            // Their memory goes back to the system, not only to the allocator's free lists (glibc keeps
            // what was freed mapped: resident memory stayed at its peak). Off the engine loop: it takes
            // milliseconds for a hundred megabytes.
            _ = checkmark_return_free_memory()
        }
    }

    private static func monotonicMilliseconds() -> Int64 {
        Int64(NIODeadline.now().uptimeNanoseconds / 1_000_000)
    }

    // MARK: Cluster

    /// A cluster node's cycle failed (its database failed or stopped answering, or its engine could
    /// not follow the journal): the node keeps running. Its clients are disconnected (their state
    /// here is about to go; they reconnect and resume), commands are refused meanwhile
    /// (`storage_unavailable`, 503) and `/readyz` says not ready; once the database answers, the state
    /// is reloaded from it, since memory may hold what never became durable, and the node takes
    /// commands again.
    private func reloadAfterStorageFailure(_ error: StorageError, cluster: ClusterCommitDriver) {
        logger.error("storage failed; disconnecting clients and reloading the state once the database answers", metadata: ["error": "\(error)"])
        cluster.leave()
        onStorageLost(error)
        reload(cluster, attempt: 1)
    }

    /// One attempt to reconnect and reload; another follows ``storageRetryInterval`` later until one
    /// succeeds or the service stops.
    private func reload(_ cluster: ClusterCommitDriver, attempt: Int) {
        guard !stopping.withLockedValue({ $0 }) else { return }
        let state = state.value
        // Reads of archived texts finish (they fail, or answer into a failed sequencer) before the
        // state they count in goes.
        guard state.archiveReads == 0, !state.loadingChannels else {
            engineLoop.scheduleTask(in: .milliseconds(50)) { self.reload(cluster, attempt: attempt) }
            return
        }
        let shared = cluster.shared
        let window = settings.messageWindow
        writer.runIfActive(eventLoop: engineLoop) { () throws -> StoredState in
            try shared.reopen()
            return try shared.load(messageWindow: window)
        }.assumeIsolated().whenComplete { result in
            guard !self.stopping.withLockedValue({ $0 }) else { return }
            switch result {
            case .success(let stored):
                let watched = self.state.value.engine.channels.values.filter { !$0.watchingUsers.isEmpty }.map(\.cid)
                self.state.value = State(stored, settings: self.settings, tracer: self.state.value.tracer)
                self.accepting.withLockedValue { $0 = true }
                // Its clients were closed: the other nodes stop counting them in `watcher_count`.
                cluster.rejoin(self, withdrawing: watched)
                self.metrics.storageReloads.increment()
                self.logger.notice("the database answers again; state reloaded, taking commands", metadata: [
                    "attempts": "\(attempt)", "last_seq": "\(stored.lastSeq)",
                ])
            case .failure(let error):
                let failure = (error as? StorageError) ?? .unavailable(reason: "\(error)")
                if case .corrupt = failure {
                    // Not a database that is away: one whose rows this binary cannot take. Waiting
                    // will not mend it; the node stops, and says why.
                    self.logger.critical("the database cannot be reloaded", metadata: ["error": "\(failure)"])
                    return self.onFatalError(failure)
                }
                if attempt == 1 {
                    self.logger.warning("the database is still unavailable; trying again", metadata: [
                        "every_seconds": "\(Self.storageRetryInterval.nanoseconds / 1_000_000_000)", "error": "\(error)",
                    ])
                }
                self.engineLoop.scheduleTask(in: Self.storageRetryInterval) { self.reload(cluster, attempt: attempt + 1) }
            }
        }
    }

    /// A node committed an entry numbered `seq` (0: some node may have committed): a cycle catches
    /// up, ``catchUpDelay`` later, unless it is this node's own commit or a cycle began after the
    /// last commit heard of (its read comes after those commits). (Nodes number apart: another's
    /// entry may be numbered below this node's last.)
    func requestCatchUp(seq: Int64) {
        let state = state.value
        guard seq == 0 || !state.numbering.gives(seq) || seq > state.lastSeq else { return }
        state.cyclesAtLastCatchUpRequest = state.cyclesStarted
        guard !state.catchUpScheduled else { return }
        state.catchUpScheduled = true
        engineLoop.scheduleTask(in: Self.catchUpDelay) {
            let state = self.state.value
            state.catchUpScheduled = false
            guard state.cyclesStarted == state.cyclesAtLastCatchUpRequest else { return }
            self.carryOut(state.sequencer.catchUpRequested())
        }
    }

    /// Cluster: applies entries another node committed and sent over a link (of shards it owns,
    /// after applying the cluster stream through `clusterSeen`), as a cycle applies what it reads;
    /// their events go to this node's connections now (they are durable). All or nothing: when
    /// they do not each continue their stream where this node stands (a message missed), when this
    /// node has not applied the cluster stream as far (what they were made after), or while it
    /// takes no commands, a cycle reads the journal instead, in its order (a catch-up is
    /// requested). An entry this engine refuses is left to that cycle too, which reloads the node
    /// as it would have.
    func applyPushed(_ entries: [JournalEntry], clusterSeen: Int64) {
        guard !stopping.withLockedValue({ $0 }) else { return }
        let state = state.value
        guard !state.loadingChannels, state.sequencer.admission(isDisconnect: false) == nil,
              state.streamSeqs[JournalStream.cluster.rawValue] >= clusterSeen else {
            return requestCatchUp(seq: 0)
        }
        var expected = state.streamSeqs
        var continuing: [JournalEntry] = []
        for entry in entries where entry.streamSeq > expected[entry.stream.rawValue] {
            guard entry.stream != .cluster, entry.streamSeq == expected[entry.stream.rawValue] + 1 else {
                return requestCatchUp(seq: 0)
            }
            expected[entry.stream.rawValue] = entry.streamSeq
            continuing.append(entry)
        }
        do {
            try applyCommitted(continuing)
        } catch {
            requestCatchUp(seq: 0)
        }
    }

    /// How far this node applied the cluster stream (users, channel types, commands over several shards).
    var clusterStreamPosition: Int64 { state.value.streamSeqs[JournalStream.cluster.rawValue] }

    /// On the engine loop, inside a cycle: applies others' commits (sending their events to this
    /// node's connections now: they are durable), then the cycle's work; returns what to commit.
    /// - Throws: ``Divergence`` when this engine cannot follow the journal.
    /// - Throws: ``StorageError/fenced(shards:)`` when the cycle holds the lock shared (`lock`) and
    ///   applied a command of a shard this node no longer serves, which only an exclusive commit may
    ///   store; ``StorageError/commitFailed(reason:)`` for a command of the cluster stream there.
    func runCycle(_ others: [JournalEntry], lock: Sequencer.Lock) throws -> CommitBatch {
        try applyCommitted(others)
        for work in state.value.sequencer.takeCycleWork() { work() }
        var batch = makeBatch(state.value.sequencer.cycleApplied())
        state.value.cycleStoredMessages = batch.storedMessageCounts
        state.value.cycleStoredEdits = batch.storedEdits
        fence(&batch)
        if lock == .shared { try checkSharedCommit(batch) }
        return batch
    }

    /// A batch committed beside other owners' holds only commands of shards this node serves, fenced.
    private func checkSharedCommit(_ batch: CommitBatch) throws(StorageError) {
        var lost: [ShardID] = []
        for entry in batch.entries {
            switch CommandRoute(entry.command) {
            case .owner(let shard):
                if batch.fence[shard] == nil { lost.append(shard) }
            case .connection, .anyNode:
                throw .commitFailed(reason: "journal entry \(entry.seq) of \(entry.stream) was applied in a cycle beside other owners' commits")
            }
        }
        if !lost.isEmpty { throw .fenced(shards: lost) }
    }

    /// Notes the shards this node serves as a cycle begins (its fence), and the append lock the cycle
    /// holds: as its work asked, but exclusively when a shard served at the last cycle's beginning
    /// is not served now (its commands queued meanwhile were asked for shared, and now commit
    /// unfenced).
    private func startCycle(_ lock: Sequencer.Lock) -> Sequencer.Lock {
        let state = state.value
        let serving = leases?.servingEpochs ?? [:]
        let lost = state.cycleFence.contains { serving[$0.key] != $0.value }
        state.cycleFence = serving
        return lost && lock == .shared ? .exclusive : lock
    }

    /// Fences `batch` by the shards this node served as the cycle began among its commands'
    /// (``CommandRoute``), at the epochs it held them at: applied as their owner, they are stored only
    /// if it still is. Commands of shards it does not serve were applied here because nobody else
    /// was known to own them.
    private func fence(_ batch: inout CommitBatch) {
        guard leases != nil else { return }
        for entry in batch.entries {
            guard case .owner(let shard) = CommandRoute(entry.command), let epoch = state.value.cycleFence[shard] else { continue }
            batch.fence[shard] = epoch
        }
        if !batch.fence.isEmpty { batch.fenceOwner = nodeID }
    }

    /// The cycle ended: committed (nil) or failed with `error`.
    func cycleEnded(_ error: StorageError?) {
        let stored = state.value.cycleStoredMessages
        let storedEdits = state.value.cycleStoredEdits
        state.value.cycleStoredMessages = [:]
        state.value.cycleStoredEdits = [:]
        if case .fenced(let shards)? = error {
            metrics.fenceRejections.increment()
            logger.warning("a commit was fenced: another node owns its shards now", metadata: ["shards": "\(shards.map(\.rawValue))"])
            leases?.fenced(shards)
        }
        if let error {
            carryOut(state.value.sequencer.batchFailed(error))
        } else {
            if !stored.isEmpty { state.value.engine.markMessagesDurable(stored) }
            if !storedEdits.isEmpty { state.value.engine.markEditsDurable(storedEdits) }
            carryOut(state.value.sequencer.batchCommitted())
        }
    }

    /// A node's command failed to apply where another node had applied it: the engines disagree.
    struct Divergence: Error, CustomStringConvertible {
        var description: String
    }

    /// Applies entries other nodes committed, in journal order, exactly as they applied them, and fans
    /// out their events as one batch (also when a later entry diverges: those applied before it stand).
    /// Each stream's entries are applied in order, and an entry this node applied already (its own
    /// commit, or one read before) is passed over.
    /// - Throws: ``Divergence`` when a stream's entries have a gap or this engine refuses an entry.
    private func applyCommitted(_ entries: [JournalEntry]) throws {
        let state = state.value
        var events: [(ReceiptsEvent, SharedEvent)] = []
        defer { if !events.isEmpty { fanOut.send(events, to: state.connections) } }
        for entry in entries where entry.streamSeq > state.streamSeqs[entry.stream.rawValue] {
            let stream = CommandRoute(entry.command).stream
            guard entry.stream == stream, entry.streamSeq == state.streamSeqs[stream.rawValue] + 1 else {
                throw Divergence(description: "journal entry \(entry.seq) is number \(entry.streamSeq) of \(entry.stream); its command's "
                                 + "stream is \(stream), at \(state.streamSeqs[stream.rawValue]) here: entries are missing")
            }
            cluster?.notePresenceChange(entry.command, engine: state.engine)
            var applied = state.engine.replay(entry.command, at: entry.at)
            if case .failure(.channelsNotLoaded(let cids)) = applied {
                // Dormant channels here: loaded at once (the cycle cannot go on without them).
                for cid in cids {
                    guard let channel = try store.loadChannel(cid, messageWindow: state.messageWindow) else {
                        throw Divergence(description: "journal entry \(entry.seq) needs channel \(cid), which storage does not have")
                    }
                    state.engine.install(channel)
                }
                applied = state.engine.replay(entry.command, at: entry.at)
            }
            if case .failure(.archivedText(let cid, let position)) = applied {
                // A thread's title this node had archived: read back at once (the cycle cannot go on
                // without it; one indexed row, once per thread).
                guard let text = try store.archivedTexts(cid, positions: [position])[position] else {
                    throw Divergence(description: "journal entry \(entry.seq) needs message \(position) of \(cid), which storage does not have")
                }
                state.engine.recallText(text, of: cid, at: position)
                applied = state.engine.replay(entry.command, at: entry.at)
            }
            switch applied {
            case .failure(let error):
                throw Divergence(description: "journal entry \(entry.seq) (\(CommandCodec.op(entry.command))) was refused here: \(error)")
            case .success(let outcome):
                if case .message(let message) = outcome.result, let count = state.engine.channels[message.cid]?.messages.count {
                    // Another node stored it with its entry.
                    state.engine.markMessagesDurable([message.cid: count])
                }
                if let (cid, messageID) = entry.command.revisedMessage, let log = state.engine.channels[cid]?.messages,
                   let position = log.position(of: messageID), let edit = log.pendingEdit(at: position) {
                    // Another node stored the edit with its entry.
                    state.engine.markEditsDurable([cid: [position: edit]])
                }
                let shared = share(outcome, of: entry.command)
                followed(entry, eventCount: shared.count)
                // Which objects its node stored is not known here: its channels' next objects are new.
                state.channelObjects.forget(shared.compactMap(\.1.cid))
                events.append(contentsOf: shared)
            }
        }
    }

    /// The distinct users watching `cid` on any node: what `watcher_count` says.
    func clusterWatcherCount(_ cid: ChannelCID) -> Int {
        let local = state.value.engine.channels[cid]?.watchingUsers ?? [:]
        guard let cluster else { return local.count }
        return cluster.watcherCount(cid, local: local)
    }

    // MARK: Live trace

    /// Starts sending `subscriber` the trace lines of every command applied from now on, after a
    /// first line `{"kind":"start","at":...}` that says from when.
    package func addTraceSubscriber(_ subscriber: TraceSubscriber) {
        engineLoop.execute { self.state.value.tracer.add(subscriber) }
    }

    package func removeTraceSubscriber(id: String) {
        engineLoop.execute { self.state.value.tracer.remove(id: id) }
    }

    // MARK: Retention

    /// Removes the oldest journal history `policy` no longer keeps, on the writer thread (between
    /// commits): at most about ``RetentionPolicy/rowsPerPrune`` rows a call.
    package func prune(_ policy: RetentionPolicy) -> EventLoopFuture<(entries: Int, events: Int)> {
        let store = self.store
        return writer.runIfActive(eventLoop: engineLoop) {
            try store.prune(policy, now: WallClock.now(), limit: RetentionPolicy.rowsPerPrune)
        }
    }

    // MARK: Shutdown

    /// Stops accepting commands (disconnects still run), then completes once every pending commit is
    /// durable.
    package func drain() async {
        let promise = engineLoop.makePromise(of: Void.self)
        stopping.withLockedValue { $0 = true }
        engineLoop.execute {
            self.state.value.idleSweep?.cancel()
            self.state.value.idleSweep = nil
            self.accepting.withLockedValue { $0 = false }
            self.state.value.drained.append(promise)
            self.carryOut(self.state.value.sequencer.drainRequested())
        }
        try? await promise.futureResult.get()
    }

    /// Drains, then closes storage, the trace being recorded and the writer thread.
    package func close() async {
        await drain()
        await linkServer.withLockedValue { $0 }?.close()
        if let cluster { try? await engineLoop.submit { cluster.leave(); cluster.closeLinks() }.get() }
        if let leases {
            // Handed back so that the other nodes take them at once; past the deadline they run out.
            try? await engineLoop.flatSubmit { leases.stop(deadline: .now() + Self.leaseHandOverTimeout) }.get()
        }
        leaseStore?.close()
        await leases?.close()
        try? await engineLoop.submit { self.state.value.tracer.close() }.get()
        try? await journalReader.shutdownGracefully()
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
