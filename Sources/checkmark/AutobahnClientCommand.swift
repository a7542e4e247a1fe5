import ArgumentParser
import CheckmarkClient
import CheckmarkServer
import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore
import NIOPosix

/// `checkmark autobahn-client`: drives Checkmark's WebSocket client through every case of an
/// Autobahn-style fuzzing server (kosoku's fuzzingserver mode), echoing what it receives.
struct AutobahnClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "autobahn-client",
        abstract: "Run Checkmark's WebSocket client against an Autobahn fuzzing server (conformance testing).")

    @Option(help: "The fuzzing server, e.g. ws://127.0.0.1:9001.") var url: String
    @Option(help: "Agent name in the reports.") var agent = "checkmark"
    @Option(help: "Messages shorter than this many bytes go uncompressed.") var compressionThreshold = 0
    @Argument(help: "Only these case numbers (1-based); all when empty.") var cases: [Int] = []

    func run() async throws {
        guard let base = WebSocketURL(url) else { throw ValidationError("--url must be a ws:// URL") }
        let countConnection = try await WebSocketClient.connect(to: WebSocketURL(host: base.host, port: base.port, target: "/getCaseCount"))
        var count = 0
        for await event in countConnection.events {
            if case .text(let text) = event, let value = Int(text) { count = value }
        }
        guard count > 0 else { throw ValidationError("the fuzzing server reported no cases") }
        let selected = cases.isEmpty ? Array(1...count) : cases
        for number in selected {
            let done = DisconnectSignal()
            do {
                try await WebSocketClient.connect(
                    to: WebSocketURL(host: base.host, port: base.port, target: "/runCase?case=\(number)&agent=\(agent)"),
                    // client_no_context_takeover in the offer lets the cases in which the server asks
                    // for it (13.2, 13.5, 13.6) run; a threshold of 0 compresses even the 16-byte
                    // messages of 12.x.1/13.x.1, which kosoku's handler cannot take uncompressed.
                    compression: PerMessageDeflateConfiguration(noContextTakeover: true, compressionThreshold: compressionThreshold),
                    settings: WebSocketSettings(timeouts: WebSocketTimeouts(keepaliveInterval: nil, idleTimeout: nil))
                ) { EchoUntilClosed(done: done) }
                await done.wait()
            } catch {
                print("case \(number): \(error)")
            }
        }
        let report = try await WebSocketClient.connect(to: WebSocketURL(host: base.host, port: base.port, target: "/updateReports?agent=\(agent)"))
        for await _ in report.events {}
        print("ran \(selected.count) cases")
    }
}

/// Echoes every message and signals when the connection ends.
final class EchoUntilClosed: WebSocketApplication {
    let echo = EchoApplication()
    let done: DisconnectSignal
    init(done: DisconnectSignal) { self.done = done }
    func connected(_ session: WebSocketSession) {}
    func received(_ message: WebSocketMessage, on session: WebSocketSession) { echo.received(message, on: session) }
    func disconnected(_ session: WebSocketSession, code: WebSocketCloseCode?) { done.signal() }
}

/// A one-shot signal from an event loop to an async waiter.
final class DisconnectSignal: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    init() { (stream, continuation) = AsyncStream.makeStream(of: Void.self) }
    func signal() { continuation.finish() }
    func wait() async { for await _ in stream {} }
}
