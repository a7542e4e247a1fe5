import CoreMetrics
import Prometheus

/// A swift-metrics factory over a ``PrometheusCollectorRegistry`` that gives every family its
/// `# HELP` text, looked up by the metric's label in ``help`` (the registry's own factory registers
/// every family without one, which `promtool check metrics` rejects). A label missing from ``help``
/// is a programming error (checked in debug builds) and is exported with its name as the help text.
public struct DescribedMetricsFactory: MetricsFactory {
    public let registry: PrometheusCollectorRegistry
    /// Help text by metric name.
    public let help: [String: String]
    /// Buckets of every timer (exported as `<name>_seconds` histograms): 1 ms to 10 s.
    public static let durationBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2_500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2_500), .seconds(5), .seconds(10),
    ]
    /// Buckets of every aggregating recorder (value histograms).
    public static let valueBuckets: [Double] = [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000]

    public init(registry: PrometheusCollectorRegistry, help: [String: String]) {
        self.registry = registry
        self.help = help
    }

    private func text(_ label: String) -> String {
        assert(help[label] != nil, "no help text for metric \(label)")
        return help[label] ?? label
    }

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(name: label, labels: dimensions, help: text(label))
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(name: label, labels: dimensions, help: text(label))
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(name: label, labels: dimensions, help: text(label)) }
        return registry.makeValueHistogram(name: label, labels: dimensions, buckets: Self.valueBuckets, help: text(label))
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(name: label, labels: dimensions, help: text(label))
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(name: label, labels: dimensions, buckets: Self.durationBuckets, help: text(label))
    }

    public func destroyCounter(_ handler: any CounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    public func destroyRecorder(_ handler: any RecorderHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
        if let histogram = handler as? ValueHistogram { registry.unregisterValueHistogram(histogram) }
    }

    public func destroyMeter(_ handler: any MeterHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }

    public func destroyTimer(_ handler: any TimerHandler) {
        if let histogram = handler as? DurationHistogram { registry.unregisterDurationHistogram(histogram) }
    }
}
