import CheckmarkCore
import CheckmarkStorage
import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import CheckmarkWire
import CoreMetrics
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// One client connection of `/connect`: performs what its ``GatewaySession`` decides (writes, the
/// service's calls, the slow-consumer timer, logs and metrics) and feeds it the socket's messages,
/// the service's answers and the events fanned out. Everything runs on ``eventLoop``.
final class GatewayConnection: WebSocketApplication, EventSink {
    let eventLoop: any EventLoop
    private let gateway: Gateway
    /// What the credentials said, on the heap and only until the connection is registered: a
    /// long-lived connection should not carry it inline.
    private indirect enum Credentials {
        case checked(Result<GatewayAuthenticator.Identity, GatewayAuthenticator.Refusal>)
    }
    private var credentials: Credentials?
    /// The client's address as the listener saw it, for the refusal and access logs.
    private let peer: String
    private var websocket: WebSocketSession?
    private var session: GatewaySession
    /// Held in a byte (window bits are 8 to 15), in the padding after `session`: every connection
    /// keeps this object.
    private var sharedWindowBits: UInt8?
    private var unwritableTimer: Scheduled<Void>?
    /// When the upgrade was accepted (for the access log).
    private let opened = NIODeadline.now()

    init(eventLoop: any EventLoop, gateway: Gateway, authentication: Result<GatewayAuthenticator.Identity, GatewayAuthenticator.Refusal>,
         peer: String = "-") {
        self.eventLoop = eventLoop
        self.gateway = gateway
        credentials = .checked(authentication)
        self.peer = peer
        session = GatewaySession(limits: gateway.sessionLimits, now: .now())
    }

    /// Settled by the opening handshake (set in ``connected(_:)``, before the connection registers);
    /// the service reads it once, on the engine's loop, when the registration's `connect` applies.
    var sharedCompressionWindowBits: Int? { sharedWindowBits.map(Int.init) }

    // MARK: Inputs

    func connected(_ websocket: WebSocketSession) {
        self.websocket = websocket
        sharedWindowBits = websocket.canShareCompressedFrames ? UInt8(clamping: websocket.sharedCompressionWindowBits) : nil
        gateway.metrics.connections.increment()
        gateway.opened(self)
        guard case .checked(let authentication)? = credentials else { return }
        handle(.opened(authentication))
    }

    func received(_ message: WebSocketMessage, on websocket: WebSocketSession) {
        gateway.metrics.framesIn.increment()
        switch message {
        case .text(let text): handle(.textReceived(text, now: .now()))
        case .binary: handle(.binaryReceived(now: .now()))
        }
    }

    func disconnected(_ websocket: WebSocketSession, code: WebSocketCloseCode?) {
        handle(.disconnected(code))
        self.websocket = nil
    }

    func writabilityChanged(_ websocket: WebSocketSession, isWritable: Bool) {
        handle(.writabilityChanged(isWritable: isWritable))
    }

    func deliver(frame: ByteBuffer, type: String, cid: ChannelCID?, channelSeq: Int64?) -> Bool {
        // The per-recipient path: the session's decision without an action list.
        switch session.eventFannedOut(frame, cid: cid, channelSeq: channelSeq) {
        case .send:
            return sendEvent(frame)
        case .held, .dropped:
            return false
        case .heldPastLimit:
            handle(.heldPastLimit(at: WallClock.now()))
            return false
        }
    }

    /// Closes the connection (server shutdown: 1001; storage failure: 1011), without an error event.
    func close(_ refusal: GatewayRefusal, reason: String) {
        handle(.closeRequested(refusal, reason: reason))
    }

    private func handle(_ input: GatewaySession.Input) {
        perform(session.handle(input))
    }

    // MARK: Actions

    private func perform(_ actions: [GatewaySession.Action]) {
        for action in actions { perform(action) }
    }

    private func perform(_ action: GatewaySession.Action) {
        switch action {
        case .sendText(let text, let sent):
            guard let websocket, admitsOutbound(websocket), websocket.send(text: text) else { return }
            gateway.metrics.framesOut.increment()
            switch sent {
            case .healthCheck: gateway.metrics.fannedOut(type: "health.check", recipients: 1)
            case .reply, .error, .replayedEvent, .resumeMarker: break
            }
        case .sendFrame(let frame):
            if sendEvent(frame) { gateway.metrics.framesOut.increment() }
        case .close(let code, let reason):
            websocket?.close(code: code, reason: reason)
        case .setReading(let read):
            websocket?.setReading(read)
        case .acquireSlot:
            if let reason = gateway.counter.acquire() {
                handle(.slotRefused(reason: reason))
            } else {
                handle(.slotAcquired)
            }
        case .releaseSlot:
            gateway.counter.release()
        case .register(let userID):
            register(userID)
        case .unregister(let connectionID):
            _ = gateway.service.submit(.disconnect(connectionID: connectionID))
        case .answerHealthCheck(let connectionID):
            perform(.sendText(GatewayEnvelope.healthCheck(connectionID: connectionID, createdAt: WallClock.now(), me: nil), .healthCheck))
        case .submit(let request, let connectionID, let userID):
            let requestID = request.requestID
            submit(request.kind, connectionID: connectionID, userID: userID)
                .hop(to: eventLoop).assumeIsolated().whenComplete { outcome in
                    self.handle(.commandAnswered(requestID: requestID, outcome.mapError { WireError(any: $0) }))
                }
        case .watch(let cid, let lastSeq, let requestID, let connectionID, let userID):
            watch(cid, lastSeq: lastSeq, requestID: requestID, connectionID: connectionID, userID: userID)
        case .readReplayPage(let resume, let expected):
            readReplayPage(resume, expected: expected)
        case .continueReplay:
            handle(.replayContinued)
        case .startSlowConsumerTimer(let grace):
            unwritableTimer = eventLoop.assumeIsolated().scheduleTask(in: grace) { [self] in
                unwritableTimer = nil
                handle(.slowConsumerTimerFired(bufferedBytes: websocket?.bufferedOutboundBytes ?? 0))
            }
        case .cancelSlowConsumerTimer:
            unwritableTimer?.cancel()
            unwritableTimer = nil
        case .count(let metric):
            count(metric)
        case .logRefusal(let note):
            logRefusal(note)
        case .ended(let connectionID, let userID, let code):
            ended(connectionID: connectionID, userID: userID, code: code)
        }
    }

    /// Queues an event's frame, within the outbound limit; whether it was queued. Counting it in
    /// `framesOut` is the caller's (the fan-out counts once per batch).
    private func sendEvent(_ frame: ByteBuffer) -> Bool {
        guard let websocket, admitsOutbound(websocket) else { return false }
        return websocket.send(encodedFrame: frame)
    }

    /// Asks the session whether one more frame may be queued (the outbound limit); performs the close
    /// it decides when not.
    private func admitsOutbound(_ websocket: WebSocketSession) -> Bool {
        // A writable connection is within the limit: no need to ask how much it holds.
        let buffered = websocket.isWritable && gateway.writableIsWithinOutboundLimit ? 0 : websocket.bufferedOutboundBytes
        guard let refused = session.outboundQueued(buffered: buffered, now: .now()) else { return true }
        perform(refused)
        return false
    }

    /// Updates the user from the profile sent with the connection (creating it if it is new), registers
    /// the connection and reads its first `health.check`.
    private func register(_ userID: String) {
        guard case .checked(.success(let identity))? = credentials else { return }
        credentials = nil
        let connectionID = Self.makeConnectionID()
        let service = gateway.service
        let details = identity.details
        let detailsGiven = identity.detailsGiven
        let counter = gateway.counter
        // A user at their connection limit (counting their other connections registering) is
        // refused before their profile changes on this connection's behalf. Whether it was admitted
        // is noted apart from the read's result: a read fails after a failed commit even when it ran.
        let admission = NIOLockedValueBox(false)
        let admitted = service.read { engine in
            try counter.admitRegistration(of: userID, connectionID: connectionID, in: engine)
            admission.withLockedValue { $0 = true }
            return engine.users[userID] != nil
        }
        let registered = admitted
            .flatMap { exists -> EventLoopFuture<ReceiptsOutcome> in
                if exists {
                    // Everything a client may set about itself at connect takes effect before any
                    // later command (privacy included), or the connection is refused: never half-applied.
                    let patch = details.filter { User.settableAtConnect.contains($0.0) || !User.reservedFields.contains($0.0) }
                    return patch.isEmpty ? service.engineLoop.makeSucceededFuture(.unchanged) : service.submit(.updateUser(UserPatch(id: userID, set: patch)))
                }
                // A user the server does not know is created only from the profile the client sent.
                guard detailsGiven else { return service.engineLoop.makeFailedFuture(ReceiptsError.unknownUser(userID)) }
                let user: User
                do { user = try ResultJSON.user(id: userID, details: details) } catch {
                    return service.engineLoop.makeFailedFuture(error)
                }
                return service.submit(.upsertUser(user))
            }
            .flatMap { [sink = UnsafeTransfer(self)] _ in
                service.submit(.connect(connectionID: connectionID, userID: userID), sink: sink.wrappedValue)
            }
            .flatMap { _ in service.read { engine in Self.healthCheck(engine: engine, userID: userID, connectionID: connectionID) } }
        // An admitted registration ends once it succeeded or failed (its connection open or not).
        registered.whenComplete { _ in
            if admission.withLockedValue({ $0 }) { counter.endRegistration(of: userID, connectionID: connectionID) }
        }
        registered
            .hop(to: eventLoop)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let healthCheck): self.handle(.registered(connectionID: connectionID, healthCheck: healthCheck))
                case .failure(let error): self.handle(.registrationFailed(error))
                }
            }
    }

    private func submit(_ kind: GatewayRequest.Kind, connectionID: String, userID: String) -> EventLoopFuture<[UInt8]> {
        let service = gateway.service
        switch kind {
        case .healthCheck, .watch:
            // The session asks for these with their own actions (answerHealthCheck, watch).
            return service.engineLoop.makeFailedFuture(WireError.invalid("not a command to submit"))
        case .stopWatching(let cid):
            return service.submit(.stopWatching(connectionID: connectionID, cid: cid)).map { _ in Self.emptyObject }
        case .sendMessage(let cid, let draft):
            return service.submit(.sendMessage(cid: cid, userID: userID, draft: draft)).flatMap { outcome in
                service.read { engine in ResultJSON.message(outcome, engine: engine) }
            }
        case .markRead(let cid, let messageID):
            return service.submit(.markRead(cid: cid, userID: userID, messageID: messageID)).map { _ in Self.emptyObject }
        case .markThreadRead(let cid, let parentID):
            return service.submit(.markThreadRead(cid: cid, userID: userID, parentID: parentID)).map { _ in Self.emptyObject }
        case .markReadMany(let targets):
            return service.submit(.markReadMany(userID: userID, channels: targets)).map { _ in Self.emptyObject }
        case .markUnread(let cid, let target):
            return service.submit(.markUnread(cid: cid, userID: userID, from: target)).map { _ in Self.emptyObject }
        case .markDelivered(let latest):
            return service.submit(.markDelivered(userID: userID, latest: latest)).map { _ in Self.emptyObject }
        }
    }

    /// Watches `cid` with the service (resuming after `lastSeq`): the channel's state, the user's
    /// counts and the resume go back to the session.
    private func watch(_ cid: ChannelCID, lastSeq: Int64?, requestID: String?, connectionID: String, userID: String) {
        let service = gateway.service
        service.watch(connectionID: connectionID, userID: userID, cid: cid, resumingAfter: lastSeq, maxResumeEvents: gateway.limits.maxResumeEvents)
            .flatMap { resume in
                service.readChannelStates { engine, fragments, archived in
                    GatewaySession.WatchAnswer(
                        state: try ResultJSON.channelState(engine: engine, cid: cid, viewer: userID, watcherCount: service.clusterWatcherCount(cid),
                                                           fragments: &fragments, archived: archived),
                        counts: engine.counts(for: userID), resume: resume)
                }
            }
            .hop(to: eventLoop).assumeIsolated().whenComplete { outcome in
                self.handle(.watchAnswered(cid, lastSeq: lastSeq, requestID: requestID, outcome.mapError { WireError(any: $0) }, at: WallClock.now()))
            }
    }

    /// Reads the next page of a replay beside the engine loop and the writer; the session gets it here.
    private func readReplayPage(_ resume: ChannelResume, expected: Int64) {
        guard let userID = session.userID else { return }
        let maxBytes = min(ResumeReplay.pageBytes, gateway.limits.maxOutboundBufferBytes)
        gateway.service.readReplayPage(resume, userID: userID, expected: expected, limit: ResumeReplay.pageEvents, maxBytes: maxBytes,
                                       on: eventLoop)
            .assumeIsolated().whenSuccess { page in
                self.handle(.replayPageRead(resume.cid, page, at: WallClock.now()))
            }
    }

    private func count(_ metric: GatewaySession.Metric) {
        switch metric {
        case .authenticationFailed(let reason): gateway.metrics.authenticationFailed(reason)
        case .slowConsumerDisconnect: gateway.metrics.slowConsumerDisconnects.increment()
        case .resumed(let replayed): gateway.metrics.resumed(replayedEvents: replayed)
        case .resumeFailed: gateway.metrics.resumeFailed.increment()
        }
    }

    private func logRefusal(_ note: GatewaySession.RefusalNote) {
        let connectionID = note.connectionID ?? "-"
        let userID = note.userID ?? "-"
        switch note.kind {
        case .closed(let code):
            gateway.refusals.refused(note.code, [
                "close_code": "\(code.rawValue)", "connection_id": "\(connectionID)", "user_id": "\(userID)",
                "peer": "\(peer)", "message": "\(note.message)",
            ])
        case .answered(let status, let requestID):
            gateway.refusals.refused(note.code, [
                "status": "\(status)", "connection_id": "\(connectionID)", "user_id": "\(userID)",
                "peer": "\(peer)", "request_id": "\(requestID ?? "-")", "message": "\(note.message)",
            ])
        case .slowConsumer(let code, let buffered):
            gateway.refusals.refused(note.code, [
                "close_code": "\(code.rawValue)", "connection_id": "\(connectionID)", "user_id": "\(userID)", "peer": "\(peer)",
                "buffered_bytes": "\(buffered)", "message": "\(note.message)",
            ])
        }
    }

    /// The socket is gone: metrics, the access log line, and the gateway forgets it.
    private func ended(connectionID: String?, userID: String?, code: WebSocketCloseCode?) {
        gateway.metrics.connections.decrement()
        gateway.metrics.closed(code: code.map { Int($0.rawValue) })
        if gateway.accessLog {
            gateway.logger.info("websocket closed", metadata: [
                "connection_id": "\(connectionID ?? "-")", "user_id": "\(userID ?? "-")", "close_code": "\(code.map { "\($0.rawValue)" } ?? "1006")",
                "duration_ms": "\((NIODeadline.now() - opened).nanoseconds / 1_000_000)", "peer": "\(peer)",
            ])
        }
        gateway.closed(self)
    }

    // MARK: JSON

    private static let emptyObject: [UInt8] = Array("{}".utf8)

    /// `health.check` with `connection_id` and `me` (the user with privacy settings and unread counts).
    static func healthCheck(engine: ReceiptsEngine, userID: String, connectionID: String) -> ByteBuffer {
        GatewayEnvelope.healthCheck(connectionID: connectionID, createdAt: WallClock.now(),
                                    me: engine.users[userID].map { (user: $0, counts: engine.counts(for: userID)) })
    }

    /// A new connection's `connection_id`: 15 random characters of `[0-9A-Za-z]` (about 89 bits), so
    /// that it is a small string: every recipient of every event carries its connection's id, and a
    /// small string is copied without reference counting and hashed without reading the heap.
    static func makeConnectionID() -> String {
        var random = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))
        return String(unsafeUninitializedCapacity: connectionIDLength) { characters in
            for index in 0..<connectionIDLength {
                // Ten digits from the first word and five from the second (62^10 < 2^64).
                if index < 10 {
                    characters[index] = connectionIDAlphabet[Int(random.0 % 62)]
                    random.0 /= 62
                } else {
                    characters[index] = connectionIDAlphabet[Int(random.1 % 62)]
                    random.1 /= 62
                }
            }
            return connectionIDLength
        }
    }

    /// The longest a string of ASCII characters can be and stay small.
    static let connectionIDLength = 15
    private static let connectionIDAlphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
}
