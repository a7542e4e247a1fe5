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
        var byLoop: [ObjectIdentifier: (any EventLoop, [(any EventSink, UnreadCounts?)])] = [:]
        for recipient in event.recipients {
            guard let sink = sinks[recipient.connectionID] else { continue }
            let key = ObjectIdentifier(sink.eventLoop)
            if byLoop[key] == nil { byLoop[key] = (sink.eventLoop, []) }
            byLoop[key]!.1.append((sink, recipient.counts))
        }
        metrics.fannedOut(type: shared.type, recipients: event.recipients.count)
        switch event.payload {
        case .messageRead(let user, _, _) where !user.privacy.readReceipts: metrics.suppressedByPrivacy.increment()
        case .messageDelivered(let user, _, _) where !user.privacy.deliveryReceipts: metrics.suppressedByPrivacy.increment()
        default: break
        }
        for (_, (loop, targets)) in byLoop {
            let transfer = UnsafeTransfer(targets)
            let compression = self.compression
            loop.execute {
                FanOutFrames.deliver(shared, to: transfer.wrappedValue, compression: compression)
            }
        }
    }
}
