import NIOCore

/// The connections of one event loop that wrote during the current tick and still need a flush:
/// one task at the end of the tick flushes them all, instead of one task per connection (a fan-out
/// to a thousand connections would otherwise queue a thousand closures). Used only on its loop.
final class LoopFlushBatch {
    /// The loop whose connections this batch flushes (the sessions' ``WebSocketSession/eventLoop``).
    /// Held strongly, so that a batch is never found again for another loop created at a freed
    /// loop's address; a loop's batch then lives as long as its thread (a test's embedded loops
    /// stay until the test thread ends).
    let eventLoop: any EventLoop
    private var pending: [WebSocketChannelHandler] = []
    private var scheduled = false

    nonisolated(unsafe) private static let perLoop = LoopLocal<LoopFlushBatch>()

    /// The batch of `eventLoop`; call on that loop.
    static func of(_ eventLoop: any EventLoop) -> LoopFlushBatch {
        perLoop.value(of: eventLoop) { LoopFlushBatch(eventLoop: eventLoop) }
    }

    private init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Flushes `handler` at the end of the current tick of ``eventLoop``; call on that loop.
    func add(_ handler: WebSocketChannelHandler) {
        pending.append(handler)
        guard !scheduled else { return }
        scheduled = true
        eventLoop.assumeIsolated().execute { [self] in
            scheduled = false
            let handlers = pending
            pending.removeAll(keepingCapacity: true)
            for handler in handlers { handler.flushPending() }
        }
    }
}
