import Foundation

/// Everything one `checkmark bench` run measured, as written to `report.json` (and drawn in
/// `report.html`). Latencies are microseconds.
package struct BenchReport: Codable, Sendable {
    package struct MetricSummary: Codable, Sendable {
        package var key: String
        package var name: String
        package var count: UInt64
        package var p50: UInt64
        package var p90: UInt64
        package var p99: UInt64
        package var p999: UInt64
        package var max: UInt64
        /// HdrHistogram's percentile curve: [percentile, µs] pairs.
        package var curve: [[Double]]
    }

    package struct CounterSummary: Codable, Sendable {
        package var key: String
        package var total: Int
        package var perSecond: Double
    }

    /// One second of the measured window.
    package struct TimelinePoint: Codable, Sendable {
        package var second: Int
        package var rates: [String: Int]
        /// p99 of `message.new` latency in that second (µs), when any was measured.
        package var messageNewP99: UInt64?
        package var serverCores: Double?
        package var serverResidentBytes: Int?
        package var harnessCores: Double?
    }

    package var scenario: String
    package var parameters: [String: String]
    package var command: String
    package var startedAt: String
    package var machine: [String: String]
    package var target: String
    package var warmupSeconds: Int
    package var durationSeconds: Int
    package var metrics: [MetricSummary]
    package var counters: [CounterSummary]
    package var timeline: [TimelinePoint]
    /// Scenario-specific figures (e.g. memory per idle connection).
    package var figures: [String: Double]
    package var warnings: [String]
    package var errors: [String]

    /// Machine facts for the report: cores, CPU model, kernel, memory.
    package static func machineFacts() -> [String: String] {
        var facts: [String: String] = ["cores": String(CPUAffinity.count)]
        if let cpu = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
           let line = cpu.split(separator: "\n").first(where: { $0.hasPrefix("model name") }) {
            facts["cpu"] = line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        if let memory = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8),
           let line = memory.split(separator: "\n").first {
            facts["memory"] = line.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        if let kernel = try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8) {
            facts["kernel"] = kernel.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return facts
    }

    static func summary(_ metric: Metric, _ histogram: LatencyHistogram) -> MetricSummary {
        MetricSummary(
            key: metric.key, name: metric.name, count: histogram.count,
            p50: histogram.microseconds(at: 50), p90: histogram.microseconds(at: 90), p99: histogram.microseconds(at: 99),
            p999: histogram.microseconds(at: 99.9), max: histogram.maxMicroseconds,
            curve: histogram.percentileCurve().map { [$0.percentile, Double($0.microseconds)] })
    }

    /// Writes `report.json` and `report.html` into `directory` (created if missing).
    package func write(to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: directory + "/report.json"))
        try Data(HTMLReport(report: self).render().utf8).write(to: URL(fileURLWithPath: directory + "/report.html"))
    }

    /// The final table printed at the end of a run.
    package func table() -> String {
        var lines: [String] = []
        lines.append("\(scenario): \(durationSeconds) s measured after \(warmupSeconds) s warm-up against \(target)")
        lines.append(pad("latency", 40) + pad("count", 12) + ["p50", "p90", "p99", "p99.9", "max"].map { pad($0, 11) }.joined())
        for metric in metrics where metric.count > 0 {
            lines.append(pad(metric.name, 40) + pad(String(metric.count), 12)
                + [metric.p50, metric.p90, metric.p99, metric.p999, metric.max].map { pad(Self.format(microseconds: $0), 11) }.joined())
        }
        lines.append(pad("count", 40) + pad("total", 12) + pad("per second", 14))
        for counter in counters where counter.total > 0 {
            lines.append(pad(counter.key, 40) + pad(String(counter.total), 12) + pad(Self.format(rate: counter.perSecond), 14))
        }
        for (key, value) in figures.sorted(by: { $0.key < $1.key }) {
            lines.append(pad(key, 40) + Self.format(rate: value))
        }
        for warning in warnings { lines.append("warning: \(warning)") }
        for error in errors.prefix(5) { lines.append("error seen: \(error)") }
        return lines.joined(separator: "\n")
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    package static func format(microseconds: UInt64) -> String {
        if microseconds >= 1_000_000 { return String(format: "%.2f s", Double(microseconds) / 1e6) }
        if microseconds >= 1_000 { return String(format: "%.2f ms", Double(microseconds) / 1e3) }
        return "\(microseconds) µs"
    }

    package static func format(rate: Double) -> String {
        rate >= 100 ? String(format: "%.0f", rate) : String(format: "%.2f", rate)
    }
}
