import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore
import NIOHTTP1
import NIOPosix

/// A TCP listener speaking HTTP/1.1 and WebSocket on the same port.
package final class HTTPListener: Sendable {
    package let channel: any Channel

    private init(channel: any Channel) { self.channel = channel }

    /// The bound address (useful with port 0).
    package var localAddress: SocketAddress? { channel.localAddress }
    package var port: Int { channel.localAddress?.port ?? 0 }

    /// Binds and starts accepting.
    /// - Throws: NIO's bind error when the address is taken or not available.
    package static func bind(
        host: String, port: Int, group: any EventLoopGroup, routes: any HTTPRoutes,
        handshake: ServerHandshake, httpLimits: HTTPLimits = .init(), webSocket: WebSocketSettings = .init(),
        backlog: Int32 = 4096
    ) async throws -> HTTPListener {
        let pending = PendingConnections(limit: httpLimits.maxPendingConnections)
        // With NIO's default allocator, which the listener's channels use too (no `.allocator` option).
        let connectionSettings = WebSocketConnectionSettings(
            role: .server, limits: webSocket.limits, compressionConfiguration: handshake.compression)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: backlog)
            // Out of descriptors (EMFILE, ENFILE) or memory, accepting pauses (accept_backoff) instead of
            // failing in a tight loop (see AcceptPauseHandler for why not NIO's AcceptBackoffHandler);
            // each pause is reported once.
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptPauseHandler(pause: httpLimits.acceptBackoff) { error in
                        routes.refused(
                            status: 503, message: "accepting paused for \(httpLimits.acceptBackoff.nanoseconds / 1_000_000) ms (accept_backoff): \(error)",
                            peer: "-")
                    })
                }
            }
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: HTTPLimits.readsPerReadinessEvent)
            .childChannelOption(.recvAllocator, value: ReceiveBufferSizer(
                minimum: 64, initial: HTTPLimits.initialReceiveBufferBytes, maximum: 64 * 1024))
            .childChannelOption(.writeBufferWaterMark, value: .init(
                low: HTTPLimits.writeBufferLowWaterMark, high: HTTPLimits.writeBufferHighWaterMark))
            .childChannelInitializer { channel in
                guard pending.acquire() else {
                    // Too many connections that are not WebSocket yet: refuse this one at once.
                    let peer = channel.peerDescription
                    routes.refused(status: 503, message: "more than \(pending.limit) pending HTTP connections (max_pending_connections)", peer: peer)
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ConnectionRefusalHandler(
                            routes.refusal(status: 503, message: "too many pending connections; try again later")))
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    let headGuard = HeadSizeGuard(limit: httpLimits.maxHeadSize, routes: routes)
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(headGuard)
                    try sync.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)))
                    try sync.addHandler(HTTPResponseEncoder())
                    try sync.addHandler(HTTPServerHandler(
                        routes: routes, handshake: handshake, limits: httpLimits, webSocket: webSocket,
                        connectionSettings: connectionSettings, headGuard: headGuard, pending: pending))
                }
            }
            .bind(host: host, port: port).get()
        return HTTPListener(channel: channel)
    }

    /// Stops accepting new connections (open ones are not touched).
    package func close() async throws {
        try await channel.close()
    }
}

extension Channel {
    /// The peer's address as `ip:port` for the refusal log, or `-` when unknown.
    var peerDescription: String {
        guard let address = remoteAddress else { return "-" }
        if let ip = address.ipAddress, let port = address.port { return address.protocol == .inet6 ? "[\(ip)]:\(port)" : "\(ip):\(port)" }
        return address.description
    }
}
