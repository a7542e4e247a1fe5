import ArgumentParser
import CheckmarkServer
import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore
import NIOPosix

/// `checkmark echo`: a WebSocket echo server on every path, with the production codec and limits.
/// For conformance suites; never part of `serve`.
struct EchoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo",
        abstract: "Serve WebSocket echo on every path (for conformance testing).")

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on (0 picks a free one).") var port = 9001
    @Option(help: "Largest message in bytes (1009 past it).") var maxMessageSize = 16 << 20
    @Option(help: "Seconds between keepalive pings (0 disables).") var keepalive = 30
    @Flag(help: "Disable permessage-deflate.") var noCompression = false
    @Option(help: "Messages shorter than this many bytes go uncompressed.") var compressionThreshold = 64
    @Option(help: "zlib level for outgoing messages, 1 (fastest) to 9 (smallest).") var compressionLevel = 6
    @Flag(help: "Always compress without server context takeover (shared-frame mode).") var serverNoContextTakeover = false

    func validate() throws {
        guard (1...9).contains(compressionLevel) else { throw ValidationError("--compression-level must be 1 to 9") }
        guard compressionThreshold >= 0 else { throw ValidationError("--compression-threshold must be 0 or more") }
        guard maxMessageSize > 0 else { throw ValidationError("--max-message-size must be positive") }
    }

    func run() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        var compression = PerMessageDeflateConfiguration()
        compression.isEnabled = !noCompression
        compression.noContextTakeover = serverNoContextTakeover
        compression.compressionThreshold = compressionThreshold
        compression.level = compressionLevel
        let limits = WebSocketLimits(maxFrameSize: maxMessageSize, maxMessageSize: maxMessageSize)
        let timeouts = WebSocketTimeouts(keepaliveInterval: keepalive > 0 ? .seconds(Int64(keepalive)) : nil)
        let listener = try await HTTPListener.bind(
            host: host, port: port, group: group, routes: EchoRoutes(),
            handshake: ServerHandshake(compression: compression),
            webSocket: WebSocketSettings(limits: limits, timeouts: timeouts))
        print("checkmark echo listening on \(host):\(listener.port)")
        try await listener.channel.closeFuture.get()
    }
}
