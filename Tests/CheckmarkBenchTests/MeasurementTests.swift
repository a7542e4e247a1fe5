@testable import CheckmarkBench
import Foundation
import Testing

/// Histograms, coordinated omission, scenario shapes and the reports.
@Suite("Measurements, scenarios and reports")
struct MeasurementTests {
    @Test func percentilesAreInMicroseconds() {
        var histogram = LatencyHistogram()
        for millisecond in 1...100 { histogram.record(nanoseconds: UInt64(millisecond) * 1_000_000) }
        #expect(histogram.count == 100)
        #expect((49_000...51_000).contains(histogram.microseconds(at: 50)))
        #expect((98_000...100_500).contains(histogram.microseconds(at: 99)))
        #expect(LatencyHistogram().microseconds(at: 99) == 0)
    }

    @Test func aStallStandsForTheSamplesItKeptFromBeingTaken() {
        // A loop meant to act every 10 ms that stalled for 100 ms: HdrHistogram adds the samples
        // (90, 80, ... 10 ms) that coordinated omission would hide.
        var histogram = LatencyHistogram()
        histogram.record(nanoseconds: 100_000_000, expectedIntervalNanoseconds: 10_000_000)
        #expect(histogram.count == 10)
        #expect(histogram.microseconds(at: 50) < 60_000)
    }

    @Test func broadcastChannelsHaveTheirMembersAndEachChannelOnePublisher() {
        let workload = LoadScenario.broadcast(connections: 100, channels: 4, membersPerChannel: 30, rate: 10, payloadBytes: 10, slowConsumers: 1)
        #expect(workload.channels.count == 4 && workload.channels.allSatisfy { $0.count == 30 && Set($0).count == 30 })
        #expect(workload.publishers.values.flatMap { $0 }.sorted() == [0, 1, 2, 3])
        for (user, channels) in workload.publishers { #expect(channels.allSatisfy { workload.channels[$0].contains(user) }) }
        #expect(workload.meanFanOut == 30)
        let zipf = LoadScenario.broadcast(connections: 100, channels: 5, membersPerChannel: nil, rate: 10, payloadBytes: 10, slowConsumers: 0)
        #expect(zipf.channels.map(\.count) == [100, 50, 33, 25, 20])
    }

    @Test func receiptsIsOneGroupWhereEveryMemberPublishesAndConfirms() {
        let workload = LoadScenario.receipts(members: 50, rate: 10, confirmInterval: 1, payloadBytes: 10)
        #expect(workload.channels == [Array(0..<50)] && workload.publishers.count == 50)
        #expect(workload.deliveryEvents && workload.confirmations?.read == true)
    }

    @Test func mixedIsTheSameForTheSameSeed() {
        let a = LoadScenario.mixed(users: 200, rate: 10, payloadBytes: 10, seed: 7)
        let b = LoadScenario.mixed(users: 200, rate: 10, payloadBytes: 10, seed: 7)
        #expect(a.channels == b.channels && a.privacyOff == b.privacyOff)
        #expect(a.channels.allSatisfy { $0.count >= 2 && Set($0).count == $0.count })
        #expect(a.privacyOff.count == 20 && a.channels.filter { $0.count == 200 }.count == 3)
        #expect(LoadScenario.mixed(users: 200, rate: 10, payloadBytes: 10, seed: 8).channels != a.channels)
    }

    static func sampleReport() -> BenchReport {
        var histogram = LatencyHistogram()
        for value in [1_000, 2_000, 3_000, 50_000] as [UInt64] { histogram.record(nanoseconds: value * 1_000) }
        return BenchReport(
            scenario: "broadcast", parameters: ["rate_per_s": "10"], command: "checkmark bench broadcast", startedAt: "2026-11-22T00:00:00Z",
            machine: ["cores": "2"], target: "ws://127.0.0.1:1", warmupSeconds: 1, durationSeconds: 2,
            metrics: [BenchReport.summary(.messageNew, histogram)],
            counters: [.init(key: "deliveries", total: 40, perSecond: 20)],
            timeline: [.init(second: 1, rates: ["deliveries": 20], messageNewP99: 50_000, serverCores: 0.5, serverResidentBytes: 1 << 20, harnessCores: 0.2),
                       .init(second: 2, rates: ["deliveries": 20], messageNewP99: 3_000, serverCores: 0.4, serverResidentBytes: 1 << 20, harnessCores: 0.2)],
            figures: ["mean_fan_out": 10], warnings: ["a <warning>"], errors: [])
    }

    @Test func reportsAreWrittenAsJSONAndSelfContainedHTML() throws {
        let directory = NSTemporaryDirectory() + "bench-report-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let report = Self.sampleReport()
        try report.write(to: directory)
        let decoded = try JSONDecoder().decode(BenchReport.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/report.json")))
        #expect(decoded.metrics.first?.count == 4 && decoded.metrics.first?.p50 == report.metrics.first?.p50)
        let html = try String(contentsOfFile: directory + "/report.html", encoding: .utf8)
        #expect(html.contains("<svg") && html.contains("<polyline"))
        #expect(html.contains("a &lt;warning&gt;"), "text is escaped")
        #expect(!html.contains("<script") && !html.contains("src=") && !html.contains("href="), "no scripts or external assets")
        #expect(report.table().contains("message.new latency"))
    }
}
