import ArgumentParser
import CheckmarkBench
import CheckmarkClient
import CheckmarkServer
import CheckmarkWebSocket

/// `checkmark replay record`: the live trace of a running server, to a file.
struct ReplayRecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record the live trace of a running server (its /admin/trace stream) to a file for a while.",
        discussion: "Records what the server applies from the moment it connects. To record a server from its start, use `serve --set record=FILE` instead; only such a trace, of a server that started empty, can be re-run.")

    @Option(help: "The running server, ws://host:port.") var url: String
    @Option(help: "The trace file to write.") var out: String
    @Option(help: "Seconds to record.") var seconds: Double = 60
    @OptionGroup var credentials: ServerCredentials

    func validate() throws {
        guard WebSocketURL(url) != nil else { throw ValidationError("--url must be ws://host:port, not \(url)") }
        guard seconds > 0 else { throw ValidationError("--seconds must be positive") }
    }

    func run() async throws {
        let target = WebSocketURL(url)!
        let result = try await LiveTraceRecorder.record(
            host: target.host, port: target.port, apiKey: credentials.apiKey, apiSecret: credentials.apiSecret, to: out, seconds: seconds)
        var text = "recorded \(result.lines) lines to \(out)"
        if let started = result.startedAt { text += " (from \(started))" }
        if let code = result.closeCode { text += "; the server ended the stream early (close \(code.rawValue))" }
        print(text)
    }
}
