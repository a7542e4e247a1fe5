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
    @Flag(help: "Always compress without server context takeover (shared-frame mode).") var serverNoContextTakeover = false

    func run() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        var compression = PerMessageDeflateConfiguration()
        compression.isEnabled = !noCompression
        compression.noContextTakeover = serverNoContextTakeover
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
