import CheckmarkCore
import CheckmarkStorage
import CheckmarkWire
import CoreMetrics
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A node's side of a cluster sharing one PostgreSQL journal: runs the commit cycles the sequencer
/// asks for, follows other nodes' commits (notified, and polled every
/// ``ReceiptsService/clusterPollInterval``), forwards commands for connections held by other nodes
/// (``PeerMessage``), and keeps the other nodes' watchers for `watcher_count`. Created, and used, on
/// the engine loop; storage and peer messages go through the writer thread.
final class ClusterCommitDriver: Sendable {
    let shared: any SharedReceiptsStore
    let nodeID: String
    private let writer: NIOThreadPool
    private let engineLoop: any EventLoop
    private let metrics: ServiceMetrics
    private let logger: Logger
    private let state: NIOLoopBoundBox<State>
    /// Direct links to the other nodes (`peer_link`), nil without: every message goes through
    /// PostgreSQL's NOTIFY.
    private let links: PeerLinks?
    /// Where this node takes direct links, as told to the others.
    private let linkAddress: NIOLockedValueBox<String?>

    private final class State {
        var poll: RepeatedTask?
        /// Commands this node asked other nodes to apply, by request number.
        var peerWaiting: [Int: (Result<ReceiptsOutcome, ServiceError>) -> Void] = [:]
        /// Commands this node forwarded to their shard's owner, by request number (nil: no answer in
        /// time), with the REST answer the owner made, if any.
        var forwardWaiting: [Int: (ForwardAnswer?, String?) -> Void] = [:]
        var peerRequests = 0
        /// The other nodes' watchers, and the channels whose local watchers changed since this node
        /// last told the others.
        var presence = ClusterPresence()
        var presenceChanged: Set<ChannelCID> = []
    }

    /// `linkSecret`, when given, is the deployment's `api_secret`: this node opens direct links to
    /// the nodes that take them (``PeerLinks``).
    init(shared: any SharedReceiptsStore, nodeID: String, writer: NIOThreadPool, engineLoop: any EventLoop,
         metrics: ServiceMetrics, logger: Logger, linkSecret: String? = nil) {
        links = linkSecret.map { PeerLinks(node: nodeID, secret: $0, loop: engineLoop, logger: logger) }
        linkAddress = NIOLockedValueBox(nil)
        self.shared = shared
        self.nodeID = nodeID
        self.writer = writer
        self.engineLoop = engineLoop
        self.metrics = metrics
        self.logger = logger
        state = NIOLoopBoundBox(State(), eventLoop: engineLoop)
    }

    /// Starts following other nodes' commits and messages on behalf of `service`.
    func join(_ service: ReceiptsService) {
        rejoin(service)
        shared.startListening(
            onAppend: { seq in self.engineLoop.execute { service.requestCatchUp(seq: seq) } },
            onPeerMessage: { text in
                guard let message = PeerMessage(text) else { return }
                self.engineLoop.execute { self.receive(message, service: service) }
            })
    }

    /// Polls for other nodes' commits again and says hello (after ``leave()``, or at ``join(_:)``),
    /// first telling the others that nobody here watches `withdrawn` any more (the watchers this node
    /// had before it reloaded); notifications keep coming throughout.
    func rejoin(_ service: ReceiptsService, withdrawing withdrawn: [ChannelCID] = []) {
        state.value.poll?.cancel()
        state.value.poll = engineLoop.scheduleRepeatedTask(initialDelay: ReceiptsService.clusterPollInterval, delay: ReceiptsService.clusterPollInterval) { _ in
            service.requestCatchUp(seq: 0)
            self.tellPeers([PeerMessage.alive(from: self.nodeID, link: self.linkAddress.withLockedValue { $0 }).encoded])
        }
        tellPeers(withdrawn.map { PeerMessage.presence(from: nodeID, cid: $0, users: []).encoded }
                  + [PeerMessage.hello(from: nodeID, link: linkAddress.withLockedValue { $0 }).encoded])
    }

    /// Takes direct links from the other nodes at `address` (HOST:PORT, as they reach it), told to
    /// them from the next `alive` on; what comes over a link is handled as what comes by NOTIFY.
    func acceptLinks(at address: String) {
        linkAddress.withLockedValue { $0 = address }
    }

    /// Handles a peer message that came over a direct link (``PeerLinkServer``), on the engine loop.
    func receiveLinked(_ text: String, service: ReceiptsService) {
        guard let message = PeerMessage(text) else { return }
        metrics.receivedOverLink(kind: message.kind)
        receive(message, service: service)
    }

    /// Closes the links to the other nodes (at a stop).
    func closeLinks() {
        links?.close()
    }

    /// Stops polling (at a stop, and while the database is lost).
    func leave() {
        state.value.poll?.cancel()
        state.value.poll = nil
    }

    // MARK: Commit cycle

    /// Runs one cycle for `service`: on the writer thread, reads what other nodes committed past
    /// `after` (each stream's last number applied here; holding the append lock as `lock` says), has
    /// the engine loop apply it and the cycle's work (``ReceiptsService/runCycle(_:)``), commits the
    /// result when locked, tells the other nodes about changed watchers, then reports the outcome
    /// to the sequencer.
    func runCycle(lock: ReceiptsService.Sequencer.Lock, after: [Int64], service: ReceiptsService) {
        let shared = self.shared
        let started = NIODeadline.now()
        let committed = NIOLockedValueBox(0)
        let entries = NIOLockedValueBox<(cluster: Int64, [JournalEntry])>((0, []))
        // Announced over the links when every live node has one open, by NOTIFY otherwise.
        let linked = lock == .none ? nil : linkedPeers()
        writer.runIfActive(eventLoop: engineLoop) { () throws -> Void in
            let presence = NIOLockedValueBox<[String]>([])
            switch lock {
            case .shared, .exclusive:
                try shared.append(after: after, exclusively: lock == .exclusive, notifying: linked == nil) { others in
                    try self.engineLoop.submit { () throws -> CommitBatch in
                        let batch = try service.runCycle(others, lock: lock)
                        committed.withLockedValue { $0 = batch.entries.count }
                        if linked != nil { entries.withLockedValue { $0 = (service.clusterStreamPosition, batch.entries) } }
                        presence.withLockedValue { $0 = self.takePresenceMessages(service.engine) }
                        return batch
                    }.wait()
                }
            case .none:
                let others = try shared.commands(after: after, limit: .max)
                let messages = try self.engineLoop.submit { () throws -> [String] in
                    _ = try service.runCycle(others, lock: lock)
                    return self.takePresenceMessages(service.engine)
                }.wait()
                presence.withLockedValue { $0 = messages }
            }
            // Before the replies: a client told "watching" is counted when another node next encodes.
            for message in presence.withLockedValue({ $0 }) { try? shared.notifyPeers(message) }
        }.whenComplete { result in
            switch result {
            case .success:
                if lock != .none {
                    self.metrics.committed(batchSize: committed.withLockedValue { $0 }, seconds: Double((NIODeadline.now() - started).nanoseconds) / 1e9)
                }
                if let linked {
                    let (cluster, committed) = entries.withLockedValue { $0 }
                    self.announce(committed, seenThrough: cluster, to: linked, sending: lock == .shared)
                }
                service.cycleEnded(nil)
            case .failure(let error):
                service.cycleEnded((error as? StorageError) ?? .commitFailed(reason: "\(error)"))
            }
        }
    }

    /// The other live nodes when this node has an open link to every one of them (links to those
    /// without one are started); nil otherwise, and without links.
    private func linkedPeers() -> [String]? {
        guard let links else { return nil }
        let live = state.value.presence.liveNodes(at: .now())
        var linked = !live.isEmpty
        for peer in live where !links.open(to: peer) { linked = false }
        return linked ? live : nil
    }

    /// Sends `peers` over their links the entries this node just committed, having applied the
    /// cluster stream through `cluster` (`sending`: a cycle of its own shards only; otherwise, or
    /// when they are too large for a link's frame, how far it committed: they read them, in the
    /// journal's order); a node whose link closed meanwhile hears of the commit by NOTIFY.
    private func announce(_ entries: [JournalEntry], seenThrough cluster: Int64, to peers: [String], sending: Bool) {
        guard let last = entries.last?.seq else { return }
        var message = PeerMessage.committed(from: nodeID, seq: last).encoded
        if sending {
            let full = PeerMessage.entries(from: nodeID, cluster: cluster, entries: entries).encoded
            if full.utf8.count <= PeerLinkServer.maxFrameBytes { message = full }
        }
        var unreached = false
        for peer in peers where links?.send(message, to: peer) != true { unreached = true }
        if unreached { tellPeers([PeerMessage.committed(from: nodeID, seq: last).encoded], about: "cannot announce a commit") }
    }

    // MARK: Typing and custom events

    /// Tells the other nodes of a typing or custom event this node decided and sent to its own
    /// watchers (``PeerMessage/signal(from:type:cid:user:event:to:)``): over the direct links
    /// when every live node is linked, through NOTIFY otherwise. One too large for the way it would go
    /// (a link's frame, or a notification's payload) reaches this node's watchers only, and is logged.
    func relay(signal event: [UInt8], type eventType: String, cid: ChannelCID, user: String) {
        let text = String(decoding: event, as: UTF8.self)
        var message = PeerMessage.signal(from: nodeID, type: eventType, cid: cid, user: user, event: text).encoded
        if let peers = linkedPeers(), message.utf8.count <= PeerLinkServer.maxFrameBytes {
            let unreached = peers.filter { links?.send(message, to: $0) != true }
            guard !unreached.isEmpty else { return }
            // Through NOTIFY to those alone: the others have it already.
            message = PeerMessage.signal(from: nodeID, type: eventType, cid: cid, user: user, event: text, to: unreached).encoded
        }
        guard message.utf8.count <= type(of: shared).maxPeerMessageBytes else {
            logger.warning("a typing or custom event too large for a peer message reached only this node's watchers",
                           metadata: ["cid": "\(cid)", "bytes": "\(message.utf8.count)"])
            return
        }
        tellPeers([message], about: "cannot relay a typing or custom event")
    }

    // MARK: Other nodes' connections

    /// Asks the node holding `connectionID` to apply `command`; completes with its answer, or with
    /// `unknown_connection` when no node answers within ``ReceiptsService/peerAnswerTimeout``.
    func askPeers(_ command: ReceiptsCommand, connectionID: String,
                  complete: @escaping (Result<ReceiptsOutcome, ServiceError>) -> Void) {
        let state = state.value
        state.peerRequests += 1
        let id = state.peerRequests
        state.peerWaiting[id] = complete
        tellPeers([PeerMessage.request(from: nodeID, id: id, command: command).encoded])
        engineLoop.scheduleTask(in: ReceiptsService.peerAnswerTimeout) {
            self.state.value.peerWaiting.removeValue(forKey: id)?(.failure(.rejected(.unknownConnection(connectionID))))
        }
    }

    /// Asks node `owner` to apply `command`, one of the channel commands of a shard it owns
    /// (``CommandRoute/owner(_:)``), and to make the REST answer `answering` asks for; `answered`
    /// gets its answer (nil when none came within ``ReceiptsService/forwardAnswerTimeout``) and that
    /// REST answer, when the owner made it. False (and nothing sent) when the command is too large
    /// for a peer message: the caller applies it itself.
    func forward(_ command: ReceiptsCommand, to owner: String, answering: CommandAnswer?,
                 answered: @escaping (ForwardAnswer?, String?) -> Void) -> Bool {
        let state = state.value
        let id = state.peerRequests + 1
        let message = PeerMessage.forward(from: nodeID, to: owner, id: id, command: command, answering: answering).encoded
        guard message.utf8.count <= type(of: shared).maxPeerMessageBytes else { return false }
        state.peerRequests = id
        state.forwardWaiting[id] = answered
        tell(message, node: owner, about: "cannot forward a command to its shard's owner")
        engineLoop.scheduleTask(in: ReceiptsService.forwardAnswerTimeout) {
            self.state.value.forwardWaiting.removeValue(forKey: id)?(nil, nil)
        }
        return true
    }

    /// A request for a connection this node may hold (applied in the next cycle, then answered, when
    /// it does), the answer to one of this node's requests, or news of another node's watchers.
    private func receive(_ message: PeerMessage, service: ReceiptsService) {
        switch message {
        case .request(let from, let id, let command):
            guard from != nodeID, let connectionID = PeerMessage.isForwardable(command) else { return }
            service.schedule(lock: .none) {
                guard service.engine.connections[connectionID] != nil else { return }
                service.apply(command, sink: nil) { result in
                    var error: ReceiptsError?
                    switch result {
                    case .success: break
                    case .failure(.rejected(let refused)): error = refused
                    case .failure(let other): error = .invalidArgument("the node holding the connection could not apply it: \(other)")
                    }
                    self.tell(PeerMessage.reply(to: from, id: id, error: error).encoded, node: from, about: "cannot answer another node")
                }
            }
        case .reply(let to, let id, let error):
            guard to == nodeID, let complete = state.value.peerWaiting.removeValue(forKey: id) else { return }
            complete(error.map { .failure(.rejected($0)) } ?? .success(.unchanged))
        case .forward(let from, let to, let id, let command, let answering):
            guard to == nodeID, from != nodeID else { return }
            service.applyForwarded(command, answering: answering) { answer, body in
                var message = PeerMessage.forwarded(to: from, id: id, answer: answer, body: body).encoded
                if body != nil, message.utf8.count > type(of: self.shared).maxPeerMessageBytes {
                    // The asking node reads the answer itself.
                    message = PeerMessage.forwarded(to: from, id: id, answer: answer, body: nil).encoded
                }
                self.tell(message, node: from, about: "cannot answer a forwarded command")
            }
        case .forwarded(let to, let id, let answer, let body):
            guard to == nodeID, let answered = state.value.forwardWaiting.removeValue(forKey: id) else { return }
            answered(answer, body)
        case .committed(let from, let seq):
            guard from != nodeID else { return }
            service.requestCatchUp(seq: seq)
        case .entries(let from, let cluster, let entries):
            guard from != nodeID else { return }
            shared.committedElsewhere(entries)
            service.applyPushed(entries, clusterSeen: cluster)
        case .signal(let from, let type, let cid, let user, let event, let to):
            guard from != nodeID, to?.contains(nodeID) ?? true else { return }
            service.deliverRelayed(Array(event.utf8), type: type, cid: cid, user: user)
        case .presence(let from, let cid, let users):
            guard from != nodeID else { return }
            state.value.presence.update(from, cid: cid, users: Set(users), at: .now())
        case .alive(let from, let link):
            guard from != nodeID else { return }
            state.value.presence.heard(from, at: .now())
            links?.learn(from, address: link)
        case .hello(let from, let link):
            guard from != nodeID else { return }
            state.value.presence.heard(from, at: .now())
            links?.learn(from, address: link)
            let engine = service.engine
            let watched = engine.channels.values.filter { !$0.watchingUsers.isEmpty }.map(\.cid)
            tellPeers(presenceMessages(for: watched, engine: engine) + [PeerMessage.alive(from: nodeID, link: linkAddress.withLockedValue { $0 }).encoded])
        }
    }

    /// Sends `message`, meant for node `node` alone, on the direct link to it when one is open, and
    /// otherwise as ``tellPeers(_:about:)`` does.
    private func tell(_ message: String, node: String, about failure: Logger.Message) {
        if links?.send(message, to: node) == true { return }
        tellPeers([message], about: failure)
    }

    /// Sends `messages` to the other nodes, on the notification connection (or, while it is down, from
    /// the writer thread between commits); a message that cannot be sent is logged: presence heals
    /// with the next change, heartbeats with the next beat, a forwarded command times out.
    private func tellPeers(_ messages: [String], about failure: Logger.Message = "cannot reach other nodes") {
        guard !messages.isEmpty else { return }
        let shared = self.shared
        // At once on the notification connection when it is up: a forwarded command and its answer
        // must not wait for the commit cycle that holds the writer.
        if let sent = shared.sendToPeers(messages) {
            sent.whenFailure { error in self.logger.warning(failure, metadata: ["error": "\(error)"]) }
            return
        }
        writer.runIfActive(eventLoop: engineLoop) { for message in messages { try shared.notifyPeers(message) } }.whenFailure { error in
            self.logger.warning(failure, metadata: ["error": "\(error)"])
        }
    }

    // MARK: Presence

    /// The distinct users watching `cid` on any node, given this node's `local` watchers.
    func watcherCount(_ cid: ChannelCID, local: [String: Int]) -> Int {
        state.value.presence.watchingUsers(of: cid, at: .now()).union(local.keys).count
    }

    /// Remembers which channels' local watchers `command` may change (before `engine` applies it).
    func notePresenceChange(_ command: ReceiptsCommand, engine: ReceiptsEngine) {
        let state = state.value
        switch command {
        case .watch(_, let cid), .stopWatching(_, let cid), .removeMembers(let cid, _):
            state.presenceChanged.insert(cid)
        case .disconnect(let connectionID):
            state.presenceChanged.formUnion(engine.connections.watching(connectionID))
        case .upsertUser, .updateUser, .createChannelType, .updateChannelType, .createChannel, .addMembers,
             .connect, .sendMessage, .updateMessage, .deleteMessage, .sendReaction, .deleteReaction, .markRead, .markReadMany, .markThreadRead, .markUnread, .markDelivered:
            break
        }
    }

    private func takePresenceMessages(_ engine: ReceiptsEngine) -> [String] {
        let state = state.value
        defer { state.presenceChanged = [] }
        return presenceMessages(for: state.presenceChanged, engine: engine)
    }

    /// This node's watchers of each of `cids`, as presence messages (a list too long for one message
    /// is cut to fit: `watcher_count` then counts fewer of this node's watchers elsewhere).
    private func presenceMessages(for cids: some Sequence<ChannelCID>, engine: ReceiptsEngine) -> [String] {
        let limit = type(of: shared).maxPeerMessageBytes
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
}
