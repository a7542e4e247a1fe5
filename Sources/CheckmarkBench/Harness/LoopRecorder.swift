import NIOCore

/// The measurements of one event loop's connections, touched only on that loop (no locks on the hot
/// path). Every second the run collects each loop's sample with ``takeInterval()``, on its loop.
package final class LoopRecorder: @unchecked Sendable {
    package let eventLoop: any EventLoop
    private var current = IntervalSample()

    package init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    @inline(__always)
    package func record(_ metric: Metric, nanoseconds: UInt64) {
        eventLoop.assertInEventLoop()
        current.histograms[metric.rawValue].record(nanoseconds: nanoseconds)
    }

    @inline(__always)
    package func record(_ metric: Metric, nanoseconds: UInt64, expectedIntervalNanoseconds: UInt64) {
        current.histograms[metric.rawValue].record(nanoseconds: nanoseconds, expectedIntervalNanoseconds: expectedIntervalNanoseconds)
    }

    @inline(__always)
    package func count(_ counter: Counter, _ amount: Int = 1) {
        current.counts[counter.rawValue] &+= amount
    }

    /// The sample since the last call; starts a new one. Call on ``eventLoop``.
    package func takeInterval() -> IntervalSample {
        eventLoop.assertInEventLoop()
        defer { current = IntervalSample() }
        return current
    }

    /// Collects every recorder's interval, each on its own loop.
    package static func collect(_ recorders: [LoopRecorder]) async throws -> IntervalSample {
        var total = IntervalSample()
        for recorder in recorders {
            total.add(try await recorder.eventLoop.submit { recorder.takeInterval() }.get())
        }
        return total
    }
}
