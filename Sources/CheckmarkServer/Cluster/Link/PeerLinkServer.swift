import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The listening end of a cluster node's direct links (`peer_link`): other nodes of the deployment
/// connect, prove they hold its `api_secret` (``PeerLinkHandshake``), then send this node peer
/// messages (``PeerMessage``) meant for it alone: forwarded commands and their answers, without a
/// round trip through PostgreSQL. Each link carries messages one way, from the node that opened it.
/// A link is closed, and the refusal logged, when its handshake is wrong or takes longer than
/// ``handshakeTimeout``, when a frame is over ``maxFrameBytes``, or past ``maxLinks`` links at once.
final class PeerLinkServer: Sendable {
    /// How long a connecting node has to answer the challenge.
    static let handshakeTimeout = TimeAmount.seconds(5)
    /// The largest frame a link takes: a peer message is at most
    /// ``CheckmarkStorage/PostgresStore/maxPeerMessageBytes`` (what NOTIFY carries too).
    static let maxFrameBytes = 16 * 1024
    /// Links (authenticated or not) open at once; past it a new one is closed at once. A node opens
    /// one to each other node.
    static let maxLinks = 256

    /// `peer_link` could not be listened on (an address in use, or not of this machine).
    struct CannotListen: Error, CustomStringConvertible {
        var address: String
        var reason: String
        var description: String { "cannot listen for peer links on \(address) (peer_link): \(reason)" }
    }

    private let channel: any Channel
    private let open: NIOLockedValueBox<[ObjectIdentifier: any Channel]>

    /// The address the server listens on (its port the one bound when the setting said 0).
    var localAddress: SocketAddress? { channel.localAddress }

    private init(channel: any Channel, open: NIOLockedValueBox<[ObjectIdentifier: any Channel]>) {
        self.channel = channel
        self.open = open
    }

    /// Listens on `host`:`port` on `loop`; every message an authenticated node sends goes to
    /// `received` (on `loop`).
    /// - Throws: the bind's error (an address in use, a host not of this machine).
    static func start(host: String, port: Int, secret: String, on loop: any EventLoop, logger: Logger,
                      received: @escaping @Sendable (String) -> Void) async throws -> PeerLinkServer {
        let handshake = PeerLinkHandshake(secret: secret)
        let open = NIOLockedValueBox([ObjectIdentifier: any Channel]())
        let channel = try await ServerBootstrap(group: loop)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                let id = ObjectIdentifier(channel)
                let admitted = open.withLockedValue { links in
                    guard links.count < maxLinks else { return false }
                    links[id] = channel
                    return true
                }
                guard admitted else {
                    logger.warning("peer link refused: too many links open", metadata: ["limit": "\(maxLinks)"])
                    return channel.close()
                }
                channel.closeFuture.whenComplete { _ in _ = open.withLockedValue { $0.removeValue(forKey: id) } }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(PeerFrameDecoder(maxFrameBytes: maxFrameBytes)),
                        MessageToByteHandler(PeerFrameEncoder()),
                        PeerLinkServerHandler(handshake: handshake, logger: logger, received: received),
                    ])
                }
            }
            .bind(host: host, port: port).get()
        return PeerLinkServer(channel: channel, open: open)
    }

    /// Stops listening and closes the links open: nothing comes in after it returns.
    func close() async {
        try? await channel.close()
        for link in open.withLockedValue({ Array($0.values) }) { try? await link.close() }
    }
}

/// One inbound link: challenge, answer, then messages.
private final class PeerLinkServerHandler: ChannelInboundHandler {
    typealias InboundIn = String
    typealias OutboundOut = String

    private enum State {
        case challenged(nonce: [UInt8])
        case accepted(node: String)
    }

    private let handshake: PeerLinkHandshake
    private let logger: Logger
    private let received: @Sendable (String) -> Void
    private var state: State?
    private var timeout: Scheduled<Void>?

    init(handshake: PeerLinkHandshake, logger: Logger, received: @escaping @Sendable (String) -> Void) {
        self.handshake = handshake
        self.logger = logger
        self.received = received
    }

    func channelActive(context: ChannelHandlerContext) {
        var generator = SystemRandomNumberGenerator()
        let nonce = (0..<PeerLinkHandshake.nonceBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
        state = .challenged(nonce: nonce)
        context.writeAndFlush(wrapOutboundOut(PeerLinkHandshake.challenge(nonce: nonce)), promise: nil)
        let channel = context.channel
        let logger = logger
        let peer = "\(channel.remoteAddress.map { "\($0)" } ?? "?")"
        timeout = context.eventLoop.scheduleTask(in: PeerLinkServer.handshakeTimeout) {
            logger.warning("peer link refused: no answer to its challenge in time", metadata: ["peer": "\(peer)"])
            channel.close(promise: nil)
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let text = unwrapInboundIn(data)
        switch state {
        case .challenged(let nonce)?:
            timeout?.cancel()
            switch handshake.verify(text, nonce: nonce) {
            case .success(let node):
                state = .accepted(node: node)
                context.writeAndFlush(wrapOutboundOut(PeerLinkHandshake.accepted), promise: nil)
            case .failure(let refusal):
                logger.warning("peer link refused", metadata: ["peer": "\(context.remoteAddress.map { "\($0)" } ?? "?")", "reason": "\(refusal)"])
                state = nil
                context.close(promise: nil)
            }
        case .accepted?:
            received(text)
        case nil:
            break  // refused: closing
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A frame over the limit is the other side's fault; anything else (a reset) is the network's.
        let level: Logger.Level = error is PeerFrameDecoder.FrameTooLarge ? .warning : .debug
        logger.log(level: level, "peer link closed", metadata: ["peer": "\(context.remoteAddress.map { "\($0)" } ?? "?")", "error": "\(error)"])
        state = nil
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timeout?.cancel()
        context.fireChannelInactive()
    }
}
