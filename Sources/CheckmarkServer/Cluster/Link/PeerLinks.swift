import Logging
import NIOCore
import NIOPosix

/// A node's outgoing direct links to the other nodes of its cluster, one per node that said where it
/// listens (`peer_link`, told in its `alive` and `hello` messages): ``send(_:to:)`` writes a message
/// meant for one node on its link when that link is open and authenticated, and otherwise says so,
/// and the caller sends it through PostgreSQL as before (starting the link meanwhile). A link that
/// fails is tried again after ``retryDelay``. Used on the engine loop.
final class PeerLinks: Sendable {
    /// How long a node waits before connecting again to a node whose link failed or closed.
    static let retryDelay = TimeAmount.seconds(1)
    /// How long a connection and its handshake may take.
    static let connectTimeout = TimeAmount.seconds(2)

    private enum Link {
        case connecting(address: String)
        case ready(address: String, channel: any Channel)
        case failed(address: String, until: NIODeadline)
    }

    private final class State {
        var addresses: [String: String] = [:]
        var links: [String: Link] = [:]
        var closed = false
    }

    private let node: String
    private let handshake: PeerLinkHandshake
    private let loop: any EventLoop
    private let logger: Logger
    private let state: NIOLoopBoundBox<State>

    /// Created on `loop`, the loop its links run on.
    init(node: String, secret: String, loop: any EventLoop, logger: Logger) {
        self.node = node
        handshake = PeerLinkHandshake(secret: secret)
        self.loop = loop
        self.logger = logger
        state = NIOLoopBoundBox(State(), eventLoop: loop)
    }

    /// Notes where node `peer` listens (nil: it takes no links); a link to an old address is closed.
    func learn(_ peer: String, address: String?) {
        let state = state.value
        guard peer != node, state.addresses[peer] != address else { return }
        state.addresses[peer] = address
        if case .ready(_, let channel)? = state.links.removeValue(forKey: peer) { channel.close(promise: nil) }
    }

    /// Forgets every node's address and closes the links (at a stop).
    func close() {
        let state = state.value
        state.closed = true
        for case .ready(_, let channel) in state.links.values { channel.close(promise: nil) }
        state.links = [:]
        state.addresses = [:]
    }

    /// Whether a link to `peer` is open; when none is (and `peer` said where it listens), one is
    /// started, as ``send(_:to:)`` would.
    func open(to peer: String) -> Bool {
        let state = state.value
        guard !state.closed, let address = state.addresses[peer] else { return false }
        switch state.links[peer] {
        case .ready?: return true
        case .connecting?: return false
        case .failed(_, let until)? where until > .now(): return false
        case .failed?, nil:
            connect(to: peer, at: address)
            return false
        }
    }

    /// Writes `message` on the link to `peer`: true when it went (in order with the messages sent
    /// on it before); false when no link is open to it (one is started when `peer` said where it
    /// listens), and the caller sends `message` another way.
    func send(_ message: String, to peer: String) -> Bool {
        guard open(to: peer), case .ready(_, let channel)? = state.value.links[peer] else { return false }
        channel.writeAndFlush(message, promise: nil)
        return true
    }

    private func connect(to peer: String, at address: String) {
        guard let (host, port) = PeerLinkSettings.hostAndPort(address) else {
            state.value.links[peer] = .failed(address: address, until: .distantFuture)
            logger.warning("peer link address is not HOST:PORT", metadata: ["node": "\(peer)", "address": "\(address)"])
            return
        }
        state.value.links[peer] = .connecting(address: address)
        let handshake = handshake
        let node = node
        let loop = loop
        ClientBootstrap(group: loop)
            .connectTimeout(Self.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(PeerFrameDecoder(maxFrameBytes: PeerLinkServer.maxFrameBytes)),
                        MessageToByteHandler(PeerFrameEncoder()),
                        PeerLinkClientHandler(handshake: handshake, node: node),
                    ])
                }
            }
            .connect(host: host, port: port)
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    let timeout = loop.scheduleTask(in: Self.connectTimeout) { channel.close(promise: nil) }
                    let accepted = (try? channel.pipeline.syncOperations.handler(type: PeerLinkClientHandler.self))?.accepted
                        ?? loop.makeFailedFuture(PeerLinkClientHandler.Failure.closed)
                    accepted.whenComplete { outcome in
                        timeout.cancel()
                        switch outcome {
                        case .success: self.opened(peer, address: address, channel: channel)
                        case .failure(let error):
                            channel.close(promise: nil)
                            self.failed(peer, address: address, error)
                        }
                    }
                    channel.closeFuture.whenComplete { _ in self.lost(peer, channel: channel) }
                case .failure(let error):
                    self.failed(peer, address: address, error)
                }
            }
    }

    private func opened(_ peer: String, address: String, channel: any Channel) {
        let state = state.value
        guard !state.closed, case .connecting(let connecting)? = state.links[peer], connecting == address else {
            channel.close(promise: nil)
            return
        }
        state.links[peer] = .ready(address: address, channel: channel)
        logger.info("peer link open", metadata: ["node": "\(peer)", "address": "\(address)"])
    }

    private func failed(_ peer: String, address: String, _ error: any Error) {
        let state = state.value
        guard case .connecting(let connecting)? = state.links[peer], connecting == address else { return }
        state.links[peer] = .failed(address: address, until: .now() + Self.retryDelay)
        logger.warning("cannot open a peer link; messages to that node go through PostgreSQL meanwhile",
                       metadata: ["node": "\(peer)", "address": "\(address)", "error": "\(error)"])
    }

    private func lost(_ peer: String, channel: any Channel) {
        let state = state.value
        guard case .ready(let address, let open)? = state.links[peer], open === channel else { return }
        state.links[peer] = .failed(address: address, until: .now() + Self.retryDelay)
        logger.info("peer link closed", metadata: ["node": "\(peer)", "address": "\(address)"])
    }
}

/// The connecting end of a link: answers the challenge, then waits for the listener's acceptance
/// (``accepted``: completed once, failed when the link closes or errs first).
private final class PeerLinkClientHandler: ChannelInboundHandler {
    typealias InboundIn = String
    typealias OutboundOut = String

    enum Failure: Error, CustomStringConvertible {
        case notAPeerLink
        case refused(String)
        case closed

        var description: String {
            switch self {
            case .notAPeerLink: "the other side does not speak \(PeerLinkHandshake.protocolName)"
            case .refused(let text): "the other node refused the link (\(text.prefix(100)))"
            case .closed: "the link closed during its handshake (another api_secret?)"
            }
        }
    }

    private let handshake: PeerLinkHandshake
    private let node: String
    private var promise: EventLoopPromise<Void>?
    private(set) var accepted: EventLoopFuture<Void>!
    private var answered = false

    init(handshake: PeerLinkHandshake, node: String) {
        self.handshake = handshake
        self.node = node
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let promise = context.eventLoop.makePromise(of: Void.self)
        self.promise = promise
        accepted = promise.futureResult
    }

    private func settle(_ result: Result<Void, any Error>) {
        guard let promise else { return }
        self.promise = nil
        promise.completeWith(result)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let text = unwrapInboundIn(data)
        guard promise != nil else { return }  // nothing else comes this way on a link
        if !answered {
            guard let answer = handshake.answer(to: text, node: node) else { return settle(.failure(Failure.notAPeerLink)) }
            answered = true
            context.writeAndFlush(wrapOutboundOut(answer), promise: nil)
        } else {
            settle(text == PeerLinkHandshake.accepted ? .success(()) : .failure(Failure.refused(text)))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        settle(.failure(error))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        settle(.failure(Failure.closed))
        context.fireChannelInactive()
    }

    /// A connection refused or closed before it was ever active ends here.
    func handlerRemoved(context: ChannelHandlerContext) {
        settle(.failure(Failure.closed))
    }
}
