import NIOCore

/// A live reader of the trace (`/admin/trace`): receives the lines of every applied command, in
/// apply order, on its own event loop.
package struct TraceSubscriber: Sendable {
    package let id: String
    let eventLoop: any EventLoop
    let deliver: @Sendable ([[UInt8]]) -> Void

    package init(id: String, eventLoop: any EventLoop, deliver: @escaping @Sendable ([[UInt8]]) -> Void) {
        self.id = id
        self.eventLoop = eventLoop
        self.deliver = deliver
    }

    func send(_ lines: [[UInt8]]) {
        let deliver = self.deliver
        eventLoop.execute { deliver(lines) }
    }
}
