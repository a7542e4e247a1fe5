import Histogram

/// An HdrHistogram of latencies in microseconds (1 µs to 60 s, three significant digits); values
/// past the top are recorded at the top.
package struct LatencyHistogram: Sendable {
    package private(set) var histogram = Histogram<UInt64>(
        lowestDiscernibleValue: 1, highestTrackableValue: LatencyHistogram.highestMicroseconds, numberOfSignificantValueDigits: .three)

    package static let highestMicroseconds: UInt64 = 60_000_000

    package init() {}

    package mutating func record(nanoseconds: UInt64) {
        _ = histogram.record(max(1, min(nanoseconds / 1_000, Self.highestMicroseconds)))
    }

    /// Records a closed-loop sample with coordinated-omission correction: a sample longer than the
    /// interval at which the loop meant to act also stands for the samples it kept from being taken.
    package mutating func record(nanoseconds: UInt64, expectedIntervalNanoseconds: UInt64) {
        _ = histogram.recordCorrectedValue(max(1, min(nanoseconds / 1_000, Self.highestMicroseconds)),
                                           expectedInterval: max(1, expectedIntervalNanoseconds / 1_000))
    }

    package mutating func add(_ other: LatencyHistogram) { histogram.add(other.histogram) }

    package var count: UInt64 { histogram.totalCount }

    /// The value at a percentile, in microseconds (0 when empty).
    package func microseconds(at percentile: Double) -> UInt64 {
        count == 0 ? 0 : histogram.valueAtPercentile(percentile)
    }

    package var maxMicroseconds: UInt64 { count == 0 ? 0 : histogram.max }

    /// The percentile curve for plots: (percentile, microseconds), HdrHistogram's standard ticks.
    package func percentileCurve() -> [(percentile: Double, microseconds: UInt64)] {
        guard count > 0 else { return [] }
        return histogram.percentiles(ticksPerHalfDistance: 5).map { ($0.percentile, $0.value) }
    }
}
