import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore
import NIOPosix

/// Opens client WebSocket connections (RFC 6455 client role: fresh random masking keys, response
/// validated) on SwiftNIO. Used by the benchmark harness, the replay tool and the end-to-end tests.
public enum WebSocketClient {
    /// Connects and completes the handshake; `makeApplication` serves the open connection on its loop.
    /// - Throws: ``WebSocketClientError`` when the server refuses, NIO's connect errors otherwise.
    public static func connect(
        to url: WebSocketURL, headers: HTTPHeaderList = [:], compression: PerMessageDeflateConfiguration = .disabled,
        settings: WebSocketSettings = WebSocketSettings(timeouts: WebSocketTimeouts(keepaliveInterval: nil, idleTimeout: nil)),
        localAddress: SocketAddress? = nil,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        makeApplication: @escaping @Sendable () -> any WebSocketApplication
    ) async throws {
        var keyBytes = [UInt8](repeating: 0, count: 16)
        var random = SystemRandomNumberGenerator()
        for i in keyBytes.indices { keyBytes[i] = UInt8.random(in: .min ... .max, using: &random) }
        let handshake = ClientHandshake(
            host: url.hostHeader, path: url.target, key: HandshakeKey.makeKey(randomBytes: keyBytes),
            compression: compression, extraHeaders: headers)
        let eventLoop = group.next()
        let ready = eventLoop.makePromise(of: Void.self)
        var bootstrap = ClientBootstrap(group: eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ClientHandshakeHandler(
                        handshake: handshake, settings: settings, promise: ready, makeApplication: makeApplication))
                }
            }
        if let localAddress { bootstrap = bootstrap.bind(to: localAddress) }
        do {
            _ = try await bootstrap.connect(host: url.host, port: url.port).get()
        } catch {
            ready.fail(error)
            throw error
        }
        try await ready.futureResult.get()
    }

    /// Connects and returns a connection whose messages arrive as an async sequence.
    public static func connect(
        to url: WebSocketURL, headers: HTTPHeaderList = [:], compression: PerMessageDeflateConfiguration = .disabled,
        settings: WebSocketSettings = WebSocketSettings(timeouts: WebSocketTimeouts(keepaliveInterval: nil, idleTimeout: nil)),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> WebSocketClientConnection {
        let (stream, continuation) = AsyncStream.makeStream(of: WebSocketClientConnection.Event.self)
        let box = SessionBox()
        try await connect(to: url, headers: headers, compression: compression, settings: settings, group: group) {
            StreamingApplication(continuation: continuation, box: box)
        }
        guard let session = box.session, let eventLoop = box.eventLoop else { throw WebSocketClientError.connectionClosed }
        return WebSocketClientConnection(events: stream, session: session, eventLoop: eventLoop)
    }
}
