/// What one event loop measured during one interval (a second of the run): its latency histograms
/// and counts. Merged across loops and intervals into the report.
package struct IntervalSample: Sendable {
    package var histograms: [LatencyHistogram]
    package var counts: [Int]

    package init() {
        histograms = Metric.allCases.map { _ in LatencyHistogram() }
        counts = Array(repeating: 0, count: Counter.allCases.count)
    }

    package subscript(metric: Metric) -> LatencyHistogram {
        get { histograms[metric.rawValue] }
        set { histograms[metric.rawValue] = newValue }
    }

    package subscript(counter: Counter) -> Int {
        get { counts[counter.rawValue] }
        set { counts[counter.rawValue] = newValue }
    }

    package mutating func add(_ other: IntervalSample) {
        for index in histograms.indices where other.histograms[index].count > 0 { histograms[index].add(other.histograms[index]) }
        for index in counts.indices { counts[index] += other.counts[index] }
    }
}
