import ArgumentParser
import CheckmarkBench
import CheckmarkClient
import CheckmarkServer
import Foundation

/// `checkmark replay run TRACE`: re-runs a recorded trace and diffs what every connection receives.
struct ReplayRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Re-run a recorded trace against a fresh in-process server, or a fresh server at a URL, and diff every connection's events.",
        discussion: "Exits 0 when every connection received exactly the recorded events (times normalised) and no withheld receipt reached anyone, 1 otherwise.")

    @Argument(help: "The trace, recorded with `serve --set record=FILE`.") var trace: String
    @Option(help: "Re-run at the recorded pace times this factor (2 is twice as fast); default: as fast as possible.") var speed: Double?
    @Flag(help: "No progress bar.") var quiet = false
    @Option(help: "A fresh (empty) server to re-run against over real sockets, ws://host:port; default: in process.") var url: String?
    @OptionGroup var credentials: ServerCredentials

    func validate() throws {
        if let speed, speed <= 0 { throw ValidationError("--speed must be positive") }
        if let url, WebSocketURL(url) == nil { throw ValidationError("--url must be ws://host:port, not \(url)") }
    }

    func run() async throws {
        let lines = try TraceFile.lines(atPath: trace)
        let showProgress = !quiet && isatty(STDERR_FILENO) == 1
        var lastShown = -1
        let progress: (Int, Int) -> Void = { done, total in
            guard showProgress, total > 0 else { return }
            let percent = done * 100 / total
            guard percent != lastShown else { return }
            lastShown = percent
            let filled = percent / 4
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: 25 - filled)
            FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total) commands".utf8))
            if done == total { FileHandle.standardError.write(Data("\n".utf8)) }
        }
        let report: ReplayReport
        if let url, let target = WebSocketURL(url) {
            report = try await RemoteReplay.run(
                lines, host: target.host, port: target.port, apiKey: credentials.apiKey, apiSecret: credentials.apiSecret, speed: speed, progress: progress)
        } else {
            report = try await ReplayRunner.run(lines, speed: speed, progress: progress)
        }
        for difference in report.differences { print(difference) }
        for violation in report.privacyViolations { print("privacy: \(violation)") }
        print("replayed \(report.commands) commands over \(report.connections) connections in \(String(format: "%.2f", report.seconds)) s; "
              + "compared \(report.eventsCompared) events: \(report.differences.count) difference(s), \(report.privacyViolations.count) privacy violation(s)")
        if !report.passed { throw ExitCode(1) }
    }
}
