import CheckmarkCore
import CheckmarkStorage
import CoreMetrics
import Foundation
import Logging
import NIOCore
import NIOPosix

/// Re-runs a recorded trace against a fresh in-process server core (the receipts service over a new
/// SQLite store in a temporary directory), with one receiving connection per recorded connection,
/// and compares what every connection receives with what the trace says it received. Times are
/// normalised (every RFC 3339 string compares equal to every other); connection ids are the
/// recorded ones, and generated message ids come out the same because the history is the same.
package enum ReplayRunner {
    /// - Parameters:
    ///   - speed: nil re-runs as fast as the server allows; otherwise at the recorded pace times this
    ///     factor (2 is twice as fast).
    ///   - alteration: changes every outcome before it is stored and sent (for tests that prove the
    ///     diff catches a build whose rules differ).
    ///   - progress: called with (commands done, commands in all).
    /// - Throws: ``ReplayPlan/Unrunnable`` for a trace without recipients (exported from a journal) or storage
    ///   errors of the temporary store.
    package static func run(
        _ lines: [TraceLine], speed: Double? = nil, alteration: (@Sendable (inout ReceiptsOutcome) -> Void)? = nil,
        progress: (Int, Int) -> Void = { _, _ in }
    ) async throws -> ReplayReport {
        let plan = try ReplayPlan(lines)
        let commands = plan.commands

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("checkmark-replay-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(directory: try DataDirectory(path: directory))
        let engineGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let sinkGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var logger = Logger(label: "checkmark-replay")
        logger.logLevel = .error
        let service = try await ReceiptsService.start(
            store: store, engineLoop: engineGroup.next(), metrics: ServiceMetrics(factory: NOOPMetricsHandler.instance), logger: logger,
            alteration: alteration)
        var report = ReplayReport()
        var sinks: [String: ReplaySink] = [:]
        var privacy = PrivacyOracle()
        let started = Date()
        let sinkLoop = sinkGroup.next()
        for (index, entry) in commands.enumerated() {
            if let gap = plan.pause(before: index, speed: speed) { try await Task.sleep(for: .seconds(gap)) }
            var sink: ReplaySink?
            if case .connect(let connectionID, _) = entry.command {
                sink = ReplaySink(connectionID: connectionID, eventLoop: sinkLoop)
                sinks[connectionID] = sink
            }
            privacy.apply(entry.command)
            do {
                let outcome = try await service.submit(entry.command, sink: sink).get()
                report.privacyViolations += privacy.violations(in: outcome.events, command: entry.seq)
            } catch {
                report.differences.append("command \(entry.seq) (\(CommandCodec.op(entry.command))) was refused in the replay: \(error)")
            }
            report.commands += 1
            progress(index + 1, commands.count)
        }
        // Every event is released once the last command's batch is durable; then its hop to the sinks' loop.
        _ = try await service.read { _ in 0 }.get()
        try await sinkLoop.submit {}.get()
        await service.close()
        try? await engineGroup.shutdownGracefully()
        try? await sinkGroup.shutdownGracefully()

        plan.compare(received: sinks.mapValues { $0.events.map(ReplayPlan.normalised) }, into: &report)
        report.seconds = Date().timeIntervalSince(started)
        return report
    }
}
