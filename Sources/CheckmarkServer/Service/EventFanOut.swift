import CheckmarkCore
import CheckmarkWebSocket
import CoreMetrics
import NIOCore

/// Sends an event to the connections among its recipients that are open on this node: recipients
/// are grouped by event loop and each loop gets one hop with its share, in the core's order. Counts
/// what was sent (and what privacy settings suppressed) in the metrics.
struct EventFanOut: Sendable {
    let metrics: ServiceMetrics
    let compression: PerMessageDeflateConfiguration

    func send(_ event: ReceiptsEvent, _ shared: SharedEvent, sinks: [String: any EventSink]) {
        // A node has a handful of event loops: a linear search of them beats hashing per recipient.
        var loops: [any EventLoop] = []
        var targets: [[(any EventSink, UnreadCounts?)]] = []
        var lastIndex = -1
        var lastLoop: ObjectIdentifier?
        for recipient in event.recipients {
            guard let sink = sinks[recipient.connectionID] else { continue }
            let loop = ObjectIdentifier(sink.eventLoop)
            if loop != lastLoop {
                lastLoop = loop
                if let found = loops.firstIndex(where: { ObjectIdentifier($0) == loop }) {
                    lastIndex = found
                } else {
                    lastIndex = loops.count
                    loops.append(sink.eventLoop)
                    targets.append([])
                    targets[lastIndex].reserveCapacity(event.recipients.count)
                }
            }
            targets[lastIndex].append((sink, recipient.counts))
        }
        metrics.fannedOut(type: shared.type, recipients: event.recipients.count)
        switch event.payload {
        case .messageRead(let user, _, _) where !user.privacy.readReceipts: metrics.suppressedByPrivacy.increment()
        case .messageDelivered(let user, _, _) where !user.privacy.deliveryReceipts: metrics.suppressedByPrivacy.increment()
        default: break
        }
        for (loop, share) in zip(loops, targets) {
            let transfer = UnsafeTransfer(share)
            let compression = self.compression
            let framesOut = metrics.framesOut
            loop.execute {
                let queued = FanOutFrames.deliver(shared, to: transfer.wrappedValue, compression: compression)
                if queued > 0 { framesOut.increment(by: Int64(queued)) }
            }
        }
    }
}
