import CheckmarkBench
import CheckmarkServer
import Foundation
import Logging
import NIOPosix
import Testing

/// The harness end to end against a real server on 127.0.0.1: what it sends arrives and is counted,
/// confirmations come back as the author's checks, and nothing is reported as an error.
@Suite("Load runs against a real server", .serialized)
struct LoadRunTests {
    static func withServer(_ body: (BenchTarget) async throws -> Void) async throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.dataDirectory = NSTemporaryDirectory() + "checkmark-bench-test-" + UUID().uuidString
        configuration.apiSecret = "bench-test-secret-0123456789"
        configuration.gateway.commandsPerSecond = 100_000
        configuration.gateway.commandBurst = 100_000
        var logger = Logger(label: "bench-test")
        logger.logLevel = .error
        let server = try await ReceiptsServer.start(configuration, group: MultiThreadedEventLoopGroup.singleton, logger: logger)
        let target = BenchTarget(host: "127.0.0.1", port: server.port, apiKey: configuration.apiKey, apiSecret: configuration.apiSecret,
                                 local: nil, serverPID: getpid())
        do {
            try await body(target)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
        try? FileManager.default.removeItem(atPath: configuration.dataDirectory)
    }

    static func settings() -> BenchSettings {
        var settings = BenchSettings(reportDirectory: NSTemporaryDirectory() + "bench-test-report", command: "test")
        settings.warmupSeconds = 0
        settings.durationSeconds = 2
        settings.harnessThreads = 2
        return settings
    }

    @Test func broadcastDeliversEveryMessageToEveryWatcher() async throws {
        try await Self.withServer { target in
            let workload = LoadScenario.broadcast(connections: 10, channels: 2, membersPerChannel: 10, rate: 40, payloadBytes: 50, slowConsumers: 0)
            let report = try await LoadRun(workload: workload, target: target, settings: Self.settings())
                .run(scenario: "broadcast", parameters: [:])
            let counts = Dictionary(uniqueKeysWithValues: report.counters.map { ($0.key, $0.total) })
            let sent = counts["messages_sent"] ?? 0
            #expect(sent >= 60)
            // Messages still in flight when the window closed are not counted; everything else arrived 10 times.
            // The last second's counts are taken loop by loop (`LoopRecorder.collect`): a message sent on
            // one loop after its count was taken, and delivered on a loop counted later, has its
            // deliveries counted but not its send. So the same in-flight allowance holds both ways.
            #expect((counts["deliveries"] ?? 0) >= (sent - 8) * 10 && (counts["deliveries"] ?? 0) <= (sent + 8) * 10)
            #expect(counts["errors"] == 0 && report.errors.isEmpty)
            #expect((report.metrics.first { $0.key == "message_new" }?.count ?? 0) > 0)
        }
    }

    @Test func receiptsTurnConfirmationsIntoTheAuthorsChecks() async throws {
        try await Self.withServer { target in
            let workload = LoadScenario.receipts(members: 10, rate: 10, confirmInterval: 0.2, payloadBytes: 20)
            let report = try await LoadRun(workload: workload, target: target, settings: Self.settings())
                .run(scenario: "receipts", parameters: [:])
            let counts = Dictionary(uniqueKeysWithValues: report.counters.map { ($0.key, $0.total) })
            #expect((counts["confirmations_accepted"] ?? 0) > 0)
            #expect(report.errors.isEmpty, "\(report.errors)")
            let metrics = Dictionary(uniqueKeysWithValues: report.metrics.map { ($0.key, $0.count) })
            #expect((metrics["delivered_seen_by_author"] ?? 0) > 0)
            #expect((metrics["read_seen_by_author"] ?? 0) > 0)
        }
    }
}
