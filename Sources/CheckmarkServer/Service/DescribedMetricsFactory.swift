import CoreMetrics
import Prometheus

/// A swift-metrics factory over a ``PrometheusCollectorRegistry`` that gives every family its
/// `# HELP` text, looked up by the metric's label in ``help`` (the registry's own factory registers
/// every family without one, which `promtool check metrics` rejects). A label missing from ``help``
/// is a programming error (checked in debug builds) and is exported with its name as the help text.
package struct DescribedMetricsFactory: MetricsFactory {
    package let registry: PrometheusCollectorRegistry
    /// Help text by metric name.
    package let help: [String: String]
    /// Buckets of every timer (exported as `<name>_seconds` histograms): 1 ms to 10 s.
    package static let durationBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2_500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2_500), .seconds(5), .seconds(10),
    ]
    /// Buckets of every aggregating recorder (value histograms).
    package static let valueBuckets: [Double] = [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000]

    package init(registry: PrometheusCollectorRegistry, help: [String: String]) {
        self.registry = registry
        self.help = help
    }

    private func text(_ label: String) -> String {
        assert(help[label] != nil, "no help text for metric \(label)")
        return help[label] ?? label
    }

    package func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(name: label, labels: dimensions, help: text(label))
    }

    package func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(name: label, labels: dimensions, help: text(label))
    }

    package func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(name: label, labels: dimensions, help: text(label)) }
        return registry.makeValueHistogram(name: label, labels: dimensions, buckets: Self.valueBuckets, help: text(label))
    }

    package func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(name: label, labels: dimensions, help: text(label))
    }

    package func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(name: label, labels: dimensions, buckets: Self.durationBuckets, help: text(label))
    }

    package func destroyCounter(_ handler: any CounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    package func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    package func destroyRecorder(_ handler: any RecorderHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
        if let histogram = handler as? ValueHistogram { registry.unregisterValueHistogram(histogram) }
    }

    package func destroyMeter(_ handler: any MeterHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }

    package func destroyTimer(_ handler: any TimerHandler) {
        if let histogram = handler as? DurationHistogram { registry.unregisterDurationHistogram(histogram) }
    }
}
