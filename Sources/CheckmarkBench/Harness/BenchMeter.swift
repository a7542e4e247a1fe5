#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Turns a run into numbers: once a second it collects every loop's interval sample, samples the
/// server's and the harness's CPU and memory, prints the progress line, and (past the warm-up)
/// adds the second to the totals and the timeline. At the end it builds the ``BenchReport``.
package final class BenchMeter {
    let recorders: [LoopRecorder]
    let target: BenchTarget
    let settings: BenchSettings
    private(set) var totals = IntervalSample()
    private var timeline: [BenchReport.TimelinePoint] = []
    private var lastServer: ProcessSampler.Reading?
    private var lastHarness: ProcessSampler.Reading?
    private var harnessCoreSamples: [Double] = []
    private var measuredSeconds = 0
    private let isTerminal = isatty(STDERR_FILENO) == 1
    var warnings: [String] = []

    init(recorders: [LoopRecorder], target: BenchTarget, settings: BenchSettings) async {
        self.recorders = recorders
        self.target = target
        self.settings = settings
        lastServer = await target.sampler.read()
        lastHarness = await ProcessSampler.current.read()
    }

    /// One second: collect, sample, print; `second` counts from the start of the load (warm-up included).
    func tick(second: Int, status: String) async throws {
        let sample = try await LoopRecorder.collect(recorders)
        let server = await target.sampler.read()
        let harness = await ProcessSampler.current.read()
        let serverCores = lastServer.map2(server, ProcessSampler.cores(from:to:))
        let harnessCores = lastHarness.map2(harness, ProcessSampler.cores(from:to:))
        lastServer = server ?? lastServer
        lastHarness = harness ?? lastHarness
        let measuring = second > settings.warmupSeconds
        if measuring {
            totals.add(sample)
            measuredSeconds += 1
            if let harnessCores { harnessCoreSamples.append(harnessCores) }
            var rates: [String: Int] = [:]
            for counter in Counter.allCases where sample[counter] > 0 { rates[counter.key] = sample[counter] }
            let p99 = sample[.messageNew].count > 0 ? sample[.messageNew].microseconds(at: 99) : nil
            timeline.append(.init(second: measuredSeconds, rates: rates, messageNewP99: p99, serverCores: serverCores,
                                  serverResidentBytes: server?.residentBytes, harnessCores: harnessCores))
        }
        var line = "[\(second)s\(measuring ? "" : " warm-up")] \(status)"
        line += " | new \(sample[.deliveries])/s | confirms \(sample[.confirmationsAccepted])/s | events \(sample[.eventsReceived])/s"
        let p99 = sample[.messageNew].count > 0 ? sample[.messageNew] : sample[.commandReply]
        if p99.count > 0 { line += " | p99 \(BenchReport.format(microseconds: p99.microseconds(at: 99)))" }
        if let serverCores { line += String(format: " | server %.0f%% cpu", serverCores * 100) }
        if let rss = server?.residentBytes { line += " \(rss / 1_048_576) MiB" }
        if let harnessCores { line += String(format: " | harness %.0f%% cpu", harnessCores * 100) }
        if sample[.errors] > 0 { line += " | errors \(sample[.errors])" }
        if isTerminal {
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        } else if second % settings.progressEvery == 0 {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    func finish() {
        if isTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    /// The report of the measured seconds.
    func report(scenario: String, parameters: [String: String], figures: [String: Double], errors: [String]) -> BenchReport {
        let seconds = max(1, measuredSeconds)
        var warnings = self.warnings
        let available = Double(settings.harnessCPUs?.count ?? CPUAffinity.count)
        let busy = harnessCoreSamples.sorted()
        if let median = busy.isEmpty ? nil : busy[busy.count / 2], median >= 0.9 * Double(min(Double(settings.harnessThreads), available)) {
            warnings.append(String(format: "the harness was saturated (median %.0f%% of its %d thread(s)): figures may be the harness's limit, not the server's", median * 100, settings.harnessThreads))
        }
        if timeline.allSatisfy({ $0.serverCores == nil }) {
            warnings.append("server CPU and memory not sampled (no /proc access and no process figures in its /metrics)")
        }
        let formatter = ISO8601DateFormatter()
        return BenchReport(
            scenario: scenario, parameters: parameters, command: settings.command, startedAt: formatter.string(from: Date()),
            machine: BenchReport.machineFacts(), target: target.description, warmupSeconds: settings.warmupSeconds,
            durationSeconds: seconds,
            metrics: Metric.allCases.map { BenchReport.summary($0, totals[$0]) },
            counters: Counter.allCases.map { .init(key: $0.key, total: totals[$0], perSecond: Double(totals[$0]) / Double(seconds)) },
            timeline: timeline, figures: figures, warnings: warnings, errors: errors)
    }
}

extension Optional {
    fileprivate func map2<B>(_ other: Wrapped?, _ f: (Wrapped, Wrapped) -> B) -> B? {
        guard let self, let other else { return nil }
        return f(self, other)
    }
}
