import CheckmarkBench
import CheckmarkServer
import Foundation
import Logging
import NIOPosix
import Testing

/// A trace recorded from a harness run re-runs with zero differences, in process and against a
/// fresh server over real sockets (one WebSocket client per recorded connection, REST for the rest).
@Suite("Replay of a recorded load run", .serialized)
struct ReplayOverSocketsTests {
    static let secret = "replay-test-secret-0123456789"

    static func startServer(recording trace: String?) async throws -> (ReceiptsServer, ServerConfiguration) {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.dataDirectory = NSTemporaryDirectory() + "checkmark-replay-test-" + UUID().uuidString
        configuration.apiSecret = secret
        configuration.gateway.commandsPerSecond = 100_000
        configuration.gateway.commandBurst = 100_000
        configuration.recordPath = trace
        var logger = Logger(label: "replay-test")
        logger.logLevel = .error
        return (try await ReceiptsServer.start(configuration, group: MultiThreadedEventLoopGroup.singleton, logger: logger), configuration)
    }

    @Test func recordedMixedRunReplaysWithZeroDifferencesInProcessAndOverSockets() async throws {
        let trace = NSTemporaryDirectory() + "checkmark-mixed-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: trace) }
        let (recorded, recordedConfiguration) = try await Self.startServer(recording: trace)
        let target = BenchTarget(host: "127.0.0.1", port: recorded.port, apiKey: recordedConfiguration.apiKey,
                                 apiSecret: Self.secret, local: nil, serverPID: nil)
        var settings = BenchSettings(reportDirectory: NSTemporaryDirectory() + "replay-test-report", command: "test")
        settings.warmupSeconds = 0
        settings.durationSeconds = 1
        settings.harnessThreads = 2
        _ = try await LoadRun(workload: LoadScenario.mixed(users: 30, rate: 20, payloadBytes: 40, seed: 7), target: target, settings: settings)
            .run(scenario: "mixed", parameters: [:])
        await recorded.shutdown()
        try? FileManager.default.removeItem(atPath: recordedConfiguration.dataDirectory)

        let lines = try TraceFile.lines(atPath: trace)
        let inProcess = try await ReplayRunner.run(lines)
        #expect(inProcess.differences == [] && inProcess.privacyViolations == [])
        #expect(inProcess.connections >= 30 && inProcess.eventsCompared > 100)

        let (fresh, freshConfiguration) = try await Self.startServer(recording: nil)
        let overSockets = try await RemoteReplay.run(
            lines, host: "127.0.0.1", port: fresh.port, apiKey: freshConfiguration.apiKey, apiSecret: Self.secret)
        await fresh.shutdown()
        try? FileManager.default.removeItem(atPath: freshConfiguration.dataDirectory)
        #expect(overSockets.differences == [])
        #expect(overSockets.eventsCompared == inProcess.eventsCompared)
    }
}
