import ArgumentParser
import CheckmarkBench
import CheckmarkClient
import CheckmarkServer
import Foundation
import Logging
import NIOPosix

/// `checkmark demo`: the first session in one command. Starts a server of its own (or uses `--url`),
/// then Ana sends Ben two messages and the checks are printed as Ana's client sees them change:
/// sent, delivered, read; then, Ben's read receipts off, sent and delivered only. Exit 0 when every
/// check changed as the receipts contract says, 1 otherwise (the steps seen are printed either way).
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Show the gray check turn into two and then blue: a scripted chat between two users.",
        discussion: "Without --url it starts a server in this process on 127.0.0.1 with the development credentials and a temporary data directory, removed at the end (unless --serve).")

    @Option(help: "A running server (http://host:port) to use instead of starting one.") var url: String?
    @Option(help: "The server's api_key (default: CHECKMARK_API_KEY or the development key).") var apiKey: String?
    @Option(help: "The server's api_secret (default: CHECKMARK_API_SECRET or the development secret).") var apiSecret: String?
    @Option(help: "Port of the server this command starts (0 picks a free one).") var port = 0
    @Flag(help: "Keep the server this command started running afterwards (Ctrl-C stops it).") var serve = false

    func validate() throws {
        if url != nil && serve { throw ValidationError("--serve keeps the server this command starts; it does not go with --url") }
        if let url, Self.hostAndPort(url) == nil { throw ValidationError("--url must look like http://127.0.0.1:8080, not \(url)") }
    }

    func run() async throws {
        let key = apiKey ?? Environment.value("CHECKMARK_API_KEY") ?? ServerConfiguration.developmentAPIKey
        let secret = apiSecret ?? Environment.value("CHECKMARK_API_SECRET") ?? ServerConfiguration.developmentAPISecret
        var server: ReceiptsServer?
        var directory: String?
        let host: String
        let port: Int
        if let url, let target = Self.hostAndPort(url) {
            (host, port) = target
            print("Checkmark at \(host):\(port)")
        } else {
            var configuration = ServerConfiguration()
            configuration.port = self.port
            configuration.apiKey = key
            configuration.apiSecret = secret
            configuration.dataDirectory = FileManager.default.temporaryDirectory
                .appendingPathComponent("checkmark-demo-\(UUID().uuidString)").path
            directory = configuration.dataDirectory
            do { try configuration.validate() } catch { throw ValidationError("\(error)") }
            var logger = Logger(label: "checkmark")
            logger.logLevel = .warning
            let started = try await ReceiptsServer.start(configuration, group: MultiThreadedEventLoopGroup.singleton, logger: logger)
            server = started
            (host, port) = (configuration.host, started.port)
            print("Checkmark on \(host):\(port) (started by this command, data in a temporary directory)")
        }

        let session = FirstSession(host: host, port: port, apiKey: key, apiSecret: secret,
                                   channelID: "demo-\(UUID().uuidString.prefix(8).lowercased())")
        let colors = isatty(STDOUT_FILENO) == 1
        let steps: [FirstSession.Step]
        do {
            steps = try await session.run { step in print(Self.line(step, colors: colors)) }
        } catch {
            await stop(server, directory)
            print("demo failed: \(error)")
            throw ExitCode(1)
        }
        let expected: [MessageStatus.State] = [.sent, .delivered, .read, .sent, .delivered, .delivered]
        let asExpected = steps.map(\.state) == expected && steps.last?.readWithheld == true
        print(asExpected
            ? "Every check changed as it should: Ben's read showed while his read receipts were on, and stayed private after."
            : "Unexpected: the checks went \(steps.map { "\($0.state)" }.joined(separator: ", ")); expected \(expected.map { "\($0)" }.joined(separator: ", ")).")

        if serve, let server {
            print("Serving on http://\(host):\(port) until Ctrl-C; try the demo page: http://\(host):\(port)/demo?user=ana and ?user=ben")
            fflush(nil)
            await withTaskCancellationHandler {
                await server.waitUntilStopped()
            } onCancel: {
                Task { await server.shutdown() }
            }
        }
        await stop(server, directory)
        if !asExpected { throw ExitCode(1) }
    }

    private func stop(_ server: ReceiptsServer?, _ directory: String?) async {
        await server?.shutdown()
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// One step as Ana's client shows it: `✓` sent, `✓✓` delivered, blue `✓✓` read.
    static func line(_ step: FirstSession.Step, colors: Bool) -> String {
        let blue = colors ? "\u{1B}[34m✓✓\u{1B}[0m" : "✓✓"
        switch step.state {
        case .sent:
            let intro = step.text == FirstSession.texts.last ? "Ben turns his read receipts off.\n" : ""
            return "\(intro)ana → ben  \"\(step.text)\"\n  ✓    sent       \(step.at)"
        case .delivered where step.readWithheld:
            return "  ✓✓   stays gray: \(step.by.joined(separator: ", ")) read it with read receipts off"
        case .delivered:
            return "  ✓✓   delivered  \(step.at) to \(step.by.joined(separator: ", "))"
        case .read:
            return "  \(blue)   read       \(step.at) by \(step.by.joined(separator: ", "))\(colors ? "" : " (blue)")"
        }
    }

    /// `http://host:port` (or `ws://`, or bare `host:port`) as host and port.
    static func hostAndPort(_ url: String) -> (String, Int)? {
        var rest = Substring(url)
        for scheme in ["http://", "ws://"] where rest.hasPrefix(scheme) { rest = rest.dropFirst(scheme.count) }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]), (1...65_535).contains(port),
              !rest[..<colon].isEmpty else { return nil }
        return (String(rest[..<colon]), port)
    }
}
