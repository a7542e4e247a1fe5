import ArgumentParser
import CheckmarkServer
import Foundation
import Logging
import NIOPosix
import ServiceLifecycle
import UnixSignals

/// `checkmark serve`: the service. Settings come from defaults, then `--config FILE` (JSON), then
/// `CHECKMARK_*` environment variables, then flags; see `checkmark serve --help`.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run Checkmark: the WebSocket gateway, the REST API and /healthz, /readyz, /metrics.",
        discussion: "Precedence: flags > CHECKMARK_<KEY> environment variables > --config file (JSON with the same keys) > defaults.\n\nKeys:\n"
            + ConfigurationLoader.keys.map { "  \($0.key): \($0.help)" }.joined(separator: "\n"))

    @OptionGroup var sources: ConfigSources
    @Option(help: "Address to listen on.") var host: String?
    @Option(help: "Port to listen on (0 picks a free one).") var port: Int?
    @Option(help: "Data directory (created if missing).") var dataDir: String?
    @Option(help: "The app's api_key.") var apiKey: String?
    @Option(help: "The app's api_secret.") var apiSecret: String?
    @Option(help: "Log level.") var logLevel: String?

    func run() async throws {
        var flags: [String: String] = [:]
        for (key, value) in [("host", host), ("port", port.map(String.init)), ("data_dir", dataDir), ("api_key", apiKey),
                             ("api_secret", apiSecret), ("log_level", logLevel)] {
            if let value { flags[key] = value }
        }
        let report = try sources.report(flags: flags)
        for warning in report.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        guard report.errors.isEmpty else { throw ValidationError(report.errors.joined(separator: "\n")) }
        let configuration = report.configuration
        let level = configuration.logLevel
        let format = configuration.logFormat
        LoggingSystem.bootstrap { label in
            switch format {
            case .text:
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            case .json:
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
        }
        let logger = Logger(label: "checkmark")
        let server: ReceiptsServer
        do {
            server = try await ReceiptsServer.start(configuration, group: MultiThreadedEventLoopGroup.singleton, logger: logger)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(2)
        }
        print("checkmark listening on \(configuration.host):\(server.port)")
        // Scripts and supervisors read this line through a pipe, where stdout is block-buffered.
        fflush(nil)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: ServerService(server: server), successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        if let fatal = server.fatalError {
            logger.critical("stopped after a storage failure: \(fatal)")
            throw ExitCode(3)
        }
    }
}

/// Runs the server under swift-service-lifecycle: on SIGTERM or SIGINT the group shuts down
/// gracefully (``ReceiptsServer/shutdown()``); a storage failure stops it too.
struct ServerService: Service {
    let server: ReceiptsServer

    func run() async throws {
        await withGracefulShutdownHandler {
            await server.waitUntilStopped()
        } onGracefulShutdown: {
            Task { await server.shutdown() }
        }
    }
}
