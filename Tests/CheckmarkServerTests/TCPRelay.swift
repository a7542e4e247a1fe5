import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP relay on 127.0.0.1 in front of a server (PostgreSQL, in the tests that use it), with the
/// faults a network and a database have: ``silence()`` holds every byte both ways (a database that
/// stopped answering, a paused process, a partition) until ``speak()``; ``cut()`` closes every
/// relayed connection and refuses new ones (a database restarting) until ``restore()``.
final class TCPRelay: Sendable {
    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let listener: any Channel
    private let state: NIOLockedValueBox<State>

    struct State {
        var silent = false
        var down = false
        var pipes: [RelayPipe] = []
    }

    /// Listens on an ephemeral port of 127.0.0.1 and relays each connection to `host`:`port`.
    static func start(to host: String, port upstreamPort: Int) async throws -> TCPRelay {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let state = NIOLockedValueBox(State())
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // A client's first bytes wait until its upstream connection is there to take them.
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { inbound in
                let refused = state.withLockedValue { $0.down }
                guard !refused else { return inbound.close() }
                return ClientBootstrap(group: inbound.eventLoop)
                    .connect(host: host, port: upstreamPort)
                    .flatMap { outbound in
                        let pipe = RelayPipe(state: state)
                        state.withLockedValue { $0.pipes.append(pipe) }
                        return outbound.pipeline.addHandler(RelayHandler(pipe: pipe, towardsClient: true)).flatMap {
                            inbound.pipeline.addHandler(RelayHandler(pipe: pipe, towardsClient: false))
                        }.flatMap {
                            pipe.link(client: inbound, server: outbound)
                            return inbound.setOption(.autoRead, value: true)
                        }
                    }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return TCPRelay(port: listener.localAddress!.port!, group: group, listener: listener, state: state)
    }

    private init(port: Int, group: MultiThreadedEventLoopGroup, listener: any Channel, state: NIOLockedValueBox<State>) {
        self.port = port
        self.group = group
        self.listener = listener
        self.state = state
    }

    /// Holds every byte both ways from now on.
    func silence() {
        state.withLockedValue { $0.silent = true }
    }

    /// Delivers what was held, and relays again.
    func speak() {
        let pipes = state.withLockedValue { state in
            state.silent = false
            return state.pipes
        }
        for pipe in pipes { pipe.release() }
    }

    /// Closes every relayed connection and refuses new ones.
    func cut() {
        let pipes = state.withLockedValue { state in
            state.down = true
            defer { state.pipes = [] }
            return state.pipes
        }
        for pipe in pipes { pipe.close() }
    }

    /// Accepts connections again.
    func restore() {
        state.withLockedValue { $0.down = false }
    }

    func stop() async {
        cut()
        try? await listener.close()
        try? await group.shutdownGracefully()
    }
}

/// One relayed connection: its two channels and the bytes held while the relay is silent.
final class RelayPipe: @unchecked Sendable {
    private let lock = NIOLock()
    private let state: NIOLockedValueBox<TCPRelay.State>
    private var client: (any Channel)?
    private var server: (any Channel)?
    private var heldForClient: [ByteBuffer] = []
    private var heldForServer: [ByteBuffer] = []

    init(state: NIOLockedValueBox<TCPRelay.State>) { self.state = state }

    func link(client: any Channel, server: any Channel) {
        lock.withLock {
            self.client = client
            self.server = server
        }
    }

    /// Bytes read from one side: on to the other, or held while silent.
    func pass(_ bytes: ByteBuffer, towardsClient: Bool) {
        let silent = state.withLockedValue { $0.silent }
        let target: (any Channel)? = lock.withLock {
            if silent {
                if towardsClient { heldForClient.append(bytes) } else { heldForServer.append(bytes) }
                return nil
            }
            return towardsClient ? client : server
        }
        target?.writeAndFlush(bytes, promise: nil)
    }

    func release() {
        let (client, server, forClient, forServer) = lock.withLock {
            defer {
                heldForClient = []
                heldForServer = []
            }
            return (self.client, self.server, heldForClient, heldForServer)
        }
        for bytes in forClient { client?.writeAndFlush(bytes, promise: nil) }
        for bytes in forServer { server?.writeAndFlush(bytes, promise: nil) }
    }

    func close() {
        let (client, server) = lock.withLock { (self.client, self.server) }
        client?.close(promise: nil)
        server?.close(promise: nil)
    }
}

/// Reads one side of a pipe and hands the bytes over; closing one side closes the other.
final class RelayHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let pipe: RelayPipe
    let towardsClient: Bool

    init(pipe: RelayPipe, towardsClient: Bool) {
        self.pipe = pipe
        self.towardsClient = towardsClient
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pipe.pass(unwrapInboundIn(data), towardsClient: towardsClient)
    }

    func channelInactive(context: ChannelHandlerContext) {
        pipe.close()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
