import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore

/// One harness connection, living on its event loop: watches its user's channels, publishes on
/// schedule if it is a publisher, confirms what it received like Stream's SDKs (batched per round),
/// and measures what it receives from the event bytes (``EventScan``, ``HarnessIDs``). Touched only
/// on its event loop (hence the unchecked Sendable).
final class LoadClient: WebSocketApplication, @unchecked Sendable {
    let user: Int
    let channels: [String]
    let recorder: LoopRecorder
    let shared: LoadShared
    /// Set for the extra connections that stop reading once they are watching.
    let slow: Bool
    private var session: WebSocketSession?
    private var pendingWatches = 0
    /// Commands are accepted only after the server's first `health.check`.
    private var greeted = false
    private var watchRequested = false

    // Publishing.
    private var publishTo: [String] = []
    private var publishInterval: UInt64 = 0
    private var publishStart: UInt64 = 0
    private var published = 0
    private var payload = ""

    // Confirming: per channel the newest message seen, delivered, and read.
    private var newest: [String?]
    private var delivered: [String?]
    private var read: [String?]
    private var confirmTimer: RepeatedTask?
    private var random = SystemRandomNumberGenerator()

    init(user: Int, channels: [String], recorder: LoopRecorder, shared: LoadShared, slow: Bool) {
        self.user = user
        self.channels = channels
        self.recorder = recorder
        self.shared = shared
        self.slow = slow
        newest = Array(repeating: nil, count: channels.count)
        delivered = newest
        read = newest
    }

    func connected(_ session: WebSocketSession) {
        self.session = session
    }

    /// Sends the watch commands (once the server has greeted the connection); the shared state is
    /// told when every one is answered.
    func watchChannels() {
        watchRequested = true
        guard greeted else { return }
        pendingWatches = channels.count
        if pendingWatches == 0 { shared.clientReady() }
        for (index, cid) in channels.enumerated() {
            send(#"{"type":"watch","cid":"\#(cid)","request_id":"w\#(index)"}"#)
        }
    }

    /// Sets the schedule; the loop's ticker (``LoadRun``) calls ``publishDue()``.
    func startPublishing(to channels: [String], interval: UInt64, start: UInt64, payloadBytes: Int) {
        guard !channels.isEmpty else { return }
        publishTo = channels
        publishInterval = interval
        publishStart = start
        payload = String(repeating: "x", count: payloadBytes)
    }

    func startConfirming(every interval: TimeAmount, phase: TimeAmount) {
        guard let session else { return }
        confirmTimer = session.eventLoop.scheduleRepeatedTask(initialDelay: phase, delay: interval) { [weak self] _ in self?.confirmRound() }
    }

    func stop() {
        publishTo = []
        confirmTimer?.cancel()
        confirmTimer = nil
    }

    func close() {
        stop()
        session?.close(code: .normalClosure)
    }

    private func send(_ text: String) {
        session?.send(text: ByteBuffer(string: text))
    }

    /// Sends every message whose scheduled time has come. Each carries its scheduled time, so a late
    /// send shows up as latency (no coordinated omission).
    func publishDue(now: UInt64) {
        guard !publishTo.isEmpty, session != nil, now >= publishStart else { return }
        let due = Int((now - publishStart) / publishInterval) + 1
        while published < due {
            let scheduled = publishStart + UInt64(published) * publishInterval
            let cid = publishTo[published % publishTo.count]
            let id = HarnessIDs.message(author: user, sequence: published, scheduledNanoseconds: scheduled)
            send(#"{"type":"send_message","cid":"\#(cid)","request_id":"s\#(scheduled / 1_000)","message":{"id":"\#(id)","text":"\#(payload)"}}"#)
            published += 1
            recorder.count(.messagesSent)
        }
    }

    /// One confirmation round: mark delivered the newest message of each channel that moved, and mark
    /// read what the previous round marked delivered.
    private func confirmRound() {
        guard let confirm = shared.workload.confirmations else { return }
        let now = BenchClock.now()
        var readTargets: [String] = []
        if confirm.read {
            for index in channels.indices where delivered[index] != nil && delivered[index] != read[index] {
                readTargets.append(#""\#(channels[index])":"\#(delivered[index]!)""#)
                read[index] = delivered[index]
            }
        }
        var deliveredTargets: [String] = []
        if shared.workload.deliveryEvents {
            for index in channels.indices where newest[index] != nil && newest[index] != delivered[index] {
                deliveredTargets.append(#"{"cid":"\#(channels[index])","id":"\#(newest[index]!)"}"#)
                delivered[index] = newest[index]
            }
        } else {
            for index in channels.indices { delivered[index] = newest[index] }
        }
        if !readTargets.isEmpty {
            shared.confirmTimes.setRead(user, now)
            send(#"{"type":"mark_read_many","request_id":"c\#(now / 1_000)","read_by_channel":{\#(readTargets.joined(separator: ","))}}"#)
            recorder.count(.confirmationsSent, readTargets.count)
        }
        if !deliveredTargets.isEmpty {
            shared.confirmTimes.setDelivered(user, now)
            send(#"{"type":"mark_delivered","request_id":"c\#(now / 1_000)","latest_delivered_messages":[\#(deliveredTargets.joined(separator: ","))]}"#)
            recorder.count(.confirmationsSent, deliveredTargets.count)
        }
        if confirm.unreadProbability > 0, let index = channels.indices.randomElement(using: &random),
           let last = newest[index], read[index] != nil, Double.random(in: 0..<1, using: &random) < confirm.unreadProbability {
            send(#"{"type":"mark_unread","request_id":"c\#(now / 1_000)","cid":"\#(channels[index])","message_id":"\#(last)"}"#)
            read[index] = nil
            delivered[index] = last
            recorder.count(.confirmationsSent)
        }
    }

    func received(_ message: WebSocketMessage, on session: WebSocketSession) {
        guard case .text(let buffer) = message else { return }
        let now = BenchClock.now()
        recorder.count(.eventsReceived)
        buffer.withUnsafeReadableBytes { bytes in
            let event = EventScan(bytes)
            switch event.kind {
            case .messageNew:
                recorder.count(.deliveries)
                guard let id = event.messageID else { return }
                if let scheduled = HarnessIDs.scheduledNanoseconds(ofMessage: id), now > scheduled {
                    recorder.record(.messageNew, nanoseconds: now - scheduled)
                }
                if shared.workload.confirmations != nil, let cid = event.cid, let index = channelIndex(cid) {
                    newest[index] = String(decoding: id, as: UTF8.self)
                }
            case .messageDelivered:
                guard let id = event.lastDeliveredMessageID, HarnessIDs.author(ofMessage: id) == user,
                      let reader = event.userID.flatMap(HarnessIDs.userIndex) else { return }
                let sent = shared.confirmTimes.takeDelivered(reader)
                if sent > 0, now > sent { recorder.record(.deliveredSeenByAuthor, nanoseconds: now - sent) }
            case .messageRead:
                guard let id = event.lastReadMessageID, HarnessIDs.author(ofMessage: id) == user,
                      let reader = event.userID.flatMap(HarnessIDs.userIndex) else { return }
                let sent = shared.confirmTimes.takeRead(reader)
                if sent > 0, now > sent { recorder.record(.readSeenByAuthor, nanoseconds: now - sent) }
            case .reply:
                guard let request = event.requestID, let first = request.first else { return }
                switch first {
                case UInt8(ascii: "w"):
                    pendingWatches -= 1
                    if pendingWatches == 0 {
                        shared.clientReady()
                        if slow {
                            session.setReceiveBuffer(bytes: 16_384)
                            session.setReading(false)
                        }
                    }
                case UInt8(ascii: "c"):
                    recorder.count(.confirmationsAccepted)
                    if let sent = EventScan.number(after: UInt8(ascii: "c"), in: request) {
                        recorder.record(.commandReply, nanoseconds: now &- sent * 1_000)
                    }
                case UInt8(ascii: "s"):
                    if let sent = EventScan.number(after: UInt8(ascii: "s"), in: request), now > sent * 1_000 {
                        recorder.record(.commandReply, nanoseconds: now - sent * 1_000)
                    }
                default:
                    break
                }
            case .error:
                recorder.count(.errors)
                shared.noteError(String(decoding: bytes, as: UTF8.self))
                if let request = event.requestID, request.first == UInt8(ascii: "w") {
                    pendingWatches -= 1
                    if pendingWatches == 0 { shared.clientReady() }
                }
            case .healthCheck:
                if !greeted {
                    greeted = true
                    if watchRequested { watchChannels() }
                }
            case .other:
                break
            }
        }
    }

    private func channelIndex(_ cid: UnsafeRawBufferPointer) -> Int? {
        channels.firstIndex { $0.utf8.elementsEqual(cid) }
    }

    func disconnected(_ session: WebSocketSession, code: WebSocketCloseCode?) {
        stop()
        self.session = nil
        if code?.rawValue == 4009 {
            recorder.count(.slowConsumerDisconnects)
            shared.noteSlowDisconnect(user: user)
        } else if !shared.isClosing {
            recorder.count(.unexpectedDisconnects)
            shared.noteError("connection of \(HarnessIDs.user(user)) closed with \(code.map { String($0.rawValue) } ?? "no code")")
        }
    }
}
