import NIOCore

/// The keepalive and idle-timeout clock of one event loop's connections: one repeating task per
/// loop looks at every connection that has a keepalive interval or an idle timeout, instead of one
/// scheduled task per connection (a task, its promise and its closure, and an entry in the loop's
/// timer heap: about 300 bytes per idle connection at 10,000).
///
/// A connection's ping or idle close happens at the first look at or after it is due, so at most
/// one ``period`` late: an eighth of the shortest interval or timeout of the loop's connections,
/// at most ``maxPeriod`` (the shortest since the loop's clock started: a listener's connections all
/// have the same timeouts). The clock, and its task, exist only while the loop has such connections.
/// Used only on its loop.
final class LoopKeepalive {
    /// The longest time between two looks at a loop's connections.
    static let maxPeriod: TimeAmount = .seconds(1)
    /// The shortest: timeouts below eight times this are checked this often, not more.
    static let minPeriod: TimeAmount = .milliseconds(5)

    private let eventLoop: any EventLoop
    private var watched: [WebSocketChannelHandler] = []
    private var period: TimeAmount = LoopKeepalive.maxPeriod
    private var task: Scheduled<Void>?
    /// Which call of `schedule()` made `task`.
    private var generation = 0

    nonisolated(unsafe) private static let perLoop = LoopLocal<LoopKeepalive>()

    private init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// The clock of `eventLoop`; call on that loop.
    static func of(_ eventLoop: any EventLoop) -> LoopKeepalive {
        perLoop.value(of: eventLoop) { LoopKeepalive(eventLoop: eventLoop) }
    }

    /// The clock of `eventLoop` if it has one (it has while it watches connections); call on that loop.
    static func existing(on eventLoop: any EventLoop) -> LoopKeepalive? {
        perLoop.existing(of: eventLoop)
    }

    /// How many connections it watches.
    var watchedCount: Int { watched.count }

    /// How often connections with these timeouts need a look; nil if they need none.
    static func period(for timeouts: WebSocketTimeouts) -> TimeAmount? {
        let shortest: TimeAmount
        switch (timeouts.keepaliveInterval, timeouts.idleTimeout) {
        case (let keepalive?, let idle?): shortest = min(keepalive, idle)
        case (let only?, nil), (nil, let only?): shortest = only
        case (nil, nil): return nil
        }
        return max(minPeriod, min(maxPeriod, .nanoseconds(shortest.nanoseconds / 8)))
    }

    /// Starts looking at `handler` every `period` or more often.
    func add(_ handler: WebSocketChannelHandler, period: TimeAmount) {
        handler.keepaliveIndex = watched.count
        watched.append(handler)
        if period < self.period || task == nil {
            self.period = watched.count == 1 ? period : min(self.period, period)
            task?.cancel()
            schedule()
        }
    }

    /// Stops looking at `handler`; the last one watched takes its place.
    func remove(_ handler: WebSocketChannelHandler) {
        let index = handler.keepaliveIndex
        guard watched.indices.contains(index), watched[index] === handler else { return }
        let last = watched.removeLast()
        if index < watched.count {
            watched[index] = last
            last.keepaliveIndex = index
        }
        if watched.isEmpty {
            task?.cancel()
            task = nil
            if Self.perLoop.existing(of: eventLoop) === self { Self.perLoop.remove(of: eventLoop) }
        }
    }

    private func schedule() {
        let eventLoop = self.eventLoop
        generation &+= 1
        let scheduled = generation
        let scheduledTask = eventLoop.assumeIsolated().scheduleTask(in: period) { [self] in
            task = nil
            let now = eventLoop.now
            // An idle close removes its connection from `watched`: the loop goes over the array as
            // it was when the look began, and a connection removed meanwhile ignores its tick.
            for handler in watched { handler.keepaliveTick(at: now) }
            if !watched.isEmpty && task == nil { schedule() }
        }
        task = scheduledTask
        // Cancelled by the loop (it is shutting down, or a test loop dropped its tasks): the next
        // connection added starts the clock again.
        scheduledTask.futureResult.assumeIsolated().whenFailure { [self] _ in
            if generation == scheduled { task = nil }
        }
    }
}
