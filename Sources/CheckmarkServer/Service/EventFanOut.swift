import CheckmarkCore
import CheckmarkWebSocket
import CoreMetrics
import NIOCore

/// Sends events to the connections among their recipients that are open on this node: recipients
/// are grouped by event loop and each loop gets one hop per batch of events (a group commit's) with
/// its share of every event, in the core's order, so that a connection receiving several events of
/// the batch gets them in one write. Counts what was sent (and what privacy settings suppressed) in
/// the metrics.
struct EventFanOut: Sendable {
    let metrics: ServiceMetrics
    let compression: PerMessageDeflateConfiguration

    /// One event's recipients on one loop.
    private typealias Share = (event: SharedEvent, targets: [FanOutFrames.Target])

    /// Sends `events` in order to their recipients among `connections`; each loop gets one task for
    /// all of them.
    func send(_ events: consuming [(ReceiptsEvent, SharedEvent)], to connections: [OpenConnection]) {
        // A node has a handful of event loops: a linear search of them beats hashing per recipient.
        var loops: [any EventLoop] = []
        var loopIDs: [ObjectIdentifier] = []
        var shares: [[Share]] = []
        // Per loop, the index in `events` of its last share.
        var lastEventOfLoop: [Int] = []
        // Taken out of the list one by one, in order, so each event is moved, not copied: reading a
        // part of an element in place still copied the whole pair.
        var events = events
        events.reverseByMoving()
        var index = 0
        while let (event, shared) = events.popLast() {
            defer { index += 1 }
            count(event, shared)
            var lastIndex = -1
            var lastLoop: ObjectIdentifier?
            for recipient in event.recipients {
                guard let slot = OpenConnection.index(of: recipient.connection, in: connections),
                      let sink = connections[slot].sink, let loop = connections[slot].loop else { continue }
                if loop != lastLoop {
                    lastLoop = loop
                    if let found = loopIDs.firstIndex(of: loop) {
                        lastIndex = found
                    } else {
                        lastIndex = loops.count
                        loops.append(sink.eventLoop)
                        loopIDs.append(loop)
                        shares.append([])
                        lastEventOfLoop.append(-1)
                    }
                    // This event's share on that loop: the loop's last one, unless it has none yet.
                    if lastEventOfLoop[lastIndex] != index {
                        lastEventOfLoop[lastIndex] = index
                        var targets: [FanOutFrames.Target] = []
                        targets.reserveCapacity(event.recipients.count)
                        shares[lastIndex].append((shared, targets))
                    }
                }
                shares[lastIndex][shares[lastIndex].count - 1].targets.append((sink, recipient.counts, connections[slot].windowBits))
            }
        }
        for (loop, share) in zip(loops, shares) {
            let transfer = UnsafeTransfer(share)
            let compression = self.compression
            let framesOut = metrics.framesOut
            loop.execute {
                var queued = 0
                for (event, targets) in transfer.wrappedValue {
                    queued += FanOutFrames.deliver(event, to: targets, compression: compression)
                }
                if queued > 0 { framesOut.increment(by: Int64(queued)) }
            }
        }
    }

    /// Sends a signal (typing, a custom event: never stored) to its `recipients` among `connections`;
    /// each loop gets one task.
    func send(signal: SharedEvent, to recipients: [Recipient], among connections: [OpenConnection]) {
        metrics.fannedOut(type: ServiceMetrics.signalType(signal.type), recipients: recipients.count)
        var loops: [(loop: any EventLoop, id: ObjectIdentifier, targets: [FanOutFrames.Target])] = []
        for recipient in recipients {
            guard let slot = OpenConnection.index(of: recipient.connection, in: connections),
                  let sink = connections[slot].sink, let loop = connections[slot].loop else { continue }
            let target: FanOutFrames.Target = (sink, nil, connections[slot].windowBits)
            if let index = loops.firstIndex(where: { $0.id == loop }) {
                loops[index].targets.append(target)
            } else {
                loops.append((sink.eventLoop, loop, [target]))
            }
        }
        let compression = self.compression
        let framesOut = metrics.framesOut
        for (loop, _, targets) in loops {
            let transfer = UnsafeTransfer(targets)
            loop.execute {
                let queued = FanOutFrames.deliver(signal, to: transfer.wrappedValue, compression: compression)
                if queued > 0 { framesOut.increment(by: Int64(queued)) }
            }
        }
    }

    private func count(_ event: borrowing ReceiptsEvent, _ shared: borrowing SharedEvent) {
        metrics.fannedOut(type: shared.type, recipients: event.recipients.count)
        switch event.payload {
        case .messageRead(let user, _, _) where !user.privacy.readReceipts: metrics.suppressedByPrivacy.increment()
        case .messageDelivered(let user, _, _) where !user.privacy.deliveryReceipts: metrics.suppressedByPrivacy.increment()
        default: break
        }
    }
}
