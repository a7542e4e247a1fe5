import CheckmarkCore
import CheckmarkStorage
import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import CheckmarkWire
import CoreMetrics
import Logging
import NIOCore

/// One client connection of `/connect`: authenticates it, registers it with the service, answers
/// its commands and writes the events the service fans out to it. Everything runs on ``eventLoop``.
final class GatewayConnection: WebSocketApplication, EventSink {
    let eventLoop: any EventLoop
    private let gateway: Gateway
    private let authentication: Result<GatewayAuthenticator.Identity, GatewayAuthenticator.Refusal>
    /// The client's address as the listener saw it, for the refusal and access logs.
    private let peer: String
    private var session: WebSocketSession?
    private var connectionID: String?
    private var userID: String?
    private var holdsSlot = false
    private var gone = false
    private var watched: Set<ChannelCID> = []
    private var bucket: TokenBucket
    /// Commands refused for the rate in the current one-second window, and when it began.
    private var refusedInWindow = 0
    private var refusalWindowStart = NIODeadline.uptimeNanoseconds(0)
    /// Events fanned out between registration and the first health.check, sent right after it.
    private var framesBeforeHealthCheck: [ByteBuffer] = []
    /// Channels being resumed: their live events wait here until the missed ones are out.
    private var resuming: [ChannelCID: [(frame: ByteBuffer, channelSeq: Int64?)]] = [:]
    /// When the outbound buffer last went over the limit (nil while under it).
    private var overLimitSince: NIODeadline?
    /// Commands received and not answered yet; and whether reading the socket is paused (too many
    /// in flight, or the client not reading what it was sent).
    private var inFlight = 0
    private var readingPaused = false
    /// Closes the connection as a slow consumer when it stays unwritable (it does not read what it
    /// was sent) for the grace period; armed while it is unwritable.
    private var unwritableTimer: Scheduled<Void>?
    /// When the upgrade was accepted (for the access log).
    private let opened = NIODeadline.now()

    init(eventLoop: any EventLoop, gateway: Gateway, authentication: Result<GatewayAuthenticator.Identity, GatewayAuthenticator.Refusal>,
         peer: String = "-") {
        self.eventLoop = eventLoop
        self.gateway = gateway
        self.authentication = authentication
        self.peer = peer
        bucket = TokenBucket(rate: gateway.limits.commandsPerSecond, burst: gateway.limits.commandBurst, now: .now())
    }

    var sharedCompressionWindowBits: Int? {
        guard let session, session.canShareCompressedFrames else { return nil }
        return session.sharedCompressionWindowBits
    }

    // MARK: Lifecycle

    func connected(_ session: WebSocketSession) {
        self.session = session
        gateway.metrics.connections.increment()
        gateway.opened(self)
        let identity: GatewayAuthenticator.Identity
        switch authentication {
        case .failure(let refusal):
            gateway.metrics.authenticationFailed(refusal.reason)
            refuse(refusal.error, code: refusal.closeCode)
            return
        case .success(let value):
            identity = value
        }
        if let reason = gateway.counter.acquire(identity.userID) {
            refuse(.tooManyConnections(reason), code: GatewayCloseCode.tooManyConnections)
            return
        }
        holdsSlot = true
        userID = identity.userID
        // Channels resumed on connect: their events wait from the start, so that the replay comes in order.
        for (cid, _) in identity.resume { resuming[cid] = [] }
        let connectionID = Self.makeConnectionID()
        let service = gateway.service
        let userID = identity.userID
        let details = identity.details
        let detailsGiven = identity.detailsGiven
        // Profile fields sent with the connection update the user (creating it if it is new).
        service.read { engine in engine.users[userID] != nil }
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
            .hop(to: eventLoop)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let event):
                    if self.gone {
                        // Closed while connecting: undo the registration.
                        _ = service.submit(.disconnect(connectionID: connectionID))
                        return
                    }
                    self.connectionID = connectionID
                    self.sendJSON(event, type: "health.check")
                    let early = self.framesBeforeHealthCheck
                    self.framesBeforeHealthCheck = []
                    for frame in early { self.write(frame) }
                    if case .success(let identity) = self.authentication {
                        for (cid, after) in identity.resume {
                            self.watch(cid, lastSeq: after, requestID: "resume:\(cid)", connectionID: connectionID, userID: userID, held: true)
                        }
                    }
                case .failure(let error):
                    let wire = WireError(any: error)
                    self.refuse(wire, code: GatewayCloseCode.refusingConnect(wire))
                }
            }
    }

    func disconnected(_ session: WebSocketSession, code: WebSocketCloseCode?) {
        unwritableTimer?.cancel()
        unwritableTimer = nil
        guard !gone else { return }
        gone = true
        self.session = nil
        gateway.metrics.connections.decrement()
        gateway.metrics.closed(code: code.map { Int($0.rawValue) })
        if gateway.accessLog {
            gateway.logger.info("websocket closed", metadata: [
                "connection_id": "\(connectionID ?? "-")", "user_id": "\(userID ?? "-")", "close_code": "\(code.map { "\($0.rawValue)" } ?? "1006")",
                "duration_ms": "\((NIODeadline.now() - opened).nanoseconds / 1_000_000)", "peer": "\(peer)",
            ])
        }
        gateway.closed(self)
        if let connectionID { _ = gateway.service.submit(.disconnect(connectionID: connectionID)) }
        if holdsSlot, let userID { gateway.counter.release(userID) }
    }

    func writabilityChanged(_ session: WebSocketSession, isWritable: Bool) {
        updateReading()
        unwritableTimer?.cancel()
        unwritableTimer = nil
        guard !isWritable else { return }
        let grace = TimeAmount.milliseconds(Int64(gateway.limits.slowConsumerGraceMilliseconds))
        unwritableTimer = eventLoop.assumeIsolated().scheduleTask(in: grace) { [self] in
            guard let session = self.session, !session.isWritable else { return }
            slowConsumer(session, buffered: session.bufferedOutboundBytes, reason: "did not read what it was sent for \(grace.nanoseconds / 1_000_000) ms")
        }
    }

    /// Reads the client's commands only while it reads what it is sent (the socket is writable) and
    /// fewer than ``GatewayLimits/maxCommandsInFlight`` of its commands wait for their answers.
    private func updateReading() {
        guard let session else { return }
        let read = inFlight < GatewayLimits.maxCommandsInFlight && session.isWritable
        guard read == readingPaused else { return }
        readingPaused = !read
        session.setReading(read)
    }

    /// Closes the connection as a slow consumer (4009); nothing more is queued for it.
    private func slowConsumer(_ session: WebSocketSession, buffered: Int, reason: String) {
        gateway.metrics.slowConsumerDisconnects.increment()
        gateway.refusals.refused("slow_consumer", [
            "close_code": "4009", "connection_id": "\(connectionID ?? "-")", "user_id": "\(userID ?? "-")", "peer": "\(peer)",
            "buffered_bytes": "\(buffered)", "message": "\(reason)",
        ])
        unwritableTimer?.cancel()
        unwritableTimer = nil
        session.close(code: GatewayCloseCode.slowConsumer, reason: reason)
        self.session = nil
    }

    /// A command starts (its answer will follow) or is answered.
    private func began() {
        inFlight += 1
        updateReading()
    }

    private func answered() {
        inFlight -= 1
        updateReading()
    }

    func close(code: WebSocketCloseCode, reason: String) {
        session?.close(code: code, reason: reason)
    }

    private func refuse(_ error: WireError, code: WebSocketCloseCode) {
        gateway.refusals.refused(error.code, [
            "close_code": "\(code.rawValue)", "connection_id": "\(connectionID ?? "-")", "user_id": "\(userID ?? "-")",
            "peer": "\(peer)", "message": "\(error.message)",
        ])
        sendJSON(Self.errorEvent(error, requestID: nil), type: "error")
        session?.close(code: code, reason: error.message)
    }

    // MARK: Commands

    func received(_ message: WebSocketMessage, on session: WebSocketSession) {
        gateway.metrics.framesIn.increment()
        // Every message, binary ones too, is counted against the rate before it is answered.
        let now = NIODeadline.now()
        guard bucket.take(now: now) else {
            // Sustained excess closes (4008): more refusals within one second than the burst allows. A
            // refilled token now and then does not reset it (a flood faster than the rate never ends
            // in a run of refusals long enough otherwise).
            if now - refusalWindowStart > .seconds(1) {
                refusalWindowStart = now
                refusedInWindow = 0
            }
            refusedInWindow += 1
            if refusedInWindow > gateway.limits.commandBurst {
                refuse(.rateLimited("more than \(gateway.limits.commandsPerSecond) commands a second, for too long"), code: GatewayCloseCode.rateLimited)
            } else {
                reply(error: .rateLimited("more than \(gateway.limits.commandsPerSecond) commands a second; slow down"), requestID: nil)
            }
            return
        }
        guard case .text(let buffer) = message else {
            reply(error: .invalid("binary messages are not supported; send JSON text"), requestID: nil)
            return
        }
        let request: GatewayRequest
        switch GatewayRequest.parse(buffer.readableBytesView, limits: gateway.limits.json) {
        case .failure(let failure):
            if failure.limit != nil {
                refuse(failure.error, code: GatewayCloseCode.jsonTooLarge)
                return
            }
            reply(error: failure.error, requestID: failure.requestID)
            return
        case .success(let parsed):
            request = parsed
        }
        if case .healthCheck = request.kind {
            guard let connectionID, let userID else { return }
            let service = gateway.service
            began()
            service.read { engine in Self.healthCheck(engine: engine, userID: userID, connectionID: connectionID) }
                .hop(to: eventLoop).assumeIsolated().whenComplete { result in
                    if case .success(let event) = result { self.sendJSON(event, type: "health.check") }
                    self.answered()
                }
            return
        }
        guard let connectionID, let userID else {
            reply(error: WireError(code: "not_connected", message: "wait for the health.check event before sending commands",
                                   httpStatus: 409, streamCode: 4), requestID: request.requestID)
            return
        }
        handle(request, connectionID: connectionID, userID: userID)
    }

    private func handle(_ request: GatewayRequest, connectionID: String, userID: String) {
        let service = gateway.service
        let result: EventLoopFuture<[UInt8]>
        switch request.kind {
        case .healthCheck:
            return
        case .watch(let cid, let lastSeq):
            watch(cid, lastSeq: lastSeq, requestID: request.requestID, connectionID: connectionID, userID: userID)
            return
        case .stopWatching(let cid):
            watched.remove(cid)
            result = service.submit(.stopWatching(connectionID: connectionID, cid: cid)).map { _ in Self.emptyObject }
        case .sendMessage(let cid, let draft):
            result = service.submit(.sendMessage(cid: cid, userID: userID, draft: draft)).flatMap { outcome in
                service.read { engine in ResultJSON.message(outcome, engine: engine) }
            }
        case .markRead(let cid, let messageID):
            result = service.submit(.markRead(cid: cid, userID: userID, messageID: messageID)).map { _ in Self.emptyObject }
        case .markThreadRead(let cid, let parentID):
            result = service.submit(.markThreadRead(cid: cid, userID: userID, parentID: parentID)).map { _ in Self.emptyObject }
        case .markReadMany(let targets):
            result = service.submit(.markReadMany(userID: userID, channels: targets)).map { _ in Self.emptyObject }
        case .markUnread(let cid, let target):
            result = service.submit(.markUnread(cid: cid, userID: userID, from: target)).map { _ in Self.emptyObject }
        case .markDelivered(let latest):
            result = service.submit(.markDelivered(userID: userID, latest: latest)).map { _ in Self.emptyObject }
        }
        let requestID = request.requestID
        began()
        result.hop(to: eventLoop).assumeIsolated().whenComplete { outcome in
            switch outcome {
            case .success(let json):
                self.reply(result: json, requestID: requestID)
            case .failure(let error):
                self.reply(error: WireError(any: error), requestID: requestID)
            }
            self.answered()
        }
    }

    /// Starts watching `cid`; replies with the channel's state. With `lastSeq`, the events missed
    /// after it follow the reply, then `channel.resumed` (or `channel.resume_failed`), then the live
    /// events, which wait meanwhile.
    /// `held`: the channel's events are held already (a resume named on connect).
    private func watch(_ cid: ChannelCID, lastSeq: Int64?, requestID: String?, connectionID: String, userID: String, held: Bool = false) {
        let limits = gateway.limits
        if !watched.contains(cid) && watched.count >= limits.maxWatchedChannelsPerConnection {
            reply(error: WireError(code: "too_many_watched_channels",
                                   message: "a connection may watch at most \(limits.maxWatchedChannelsPerConnection) channels",
                                   httpStatus: 429, streamCode: 9), requestID: requestID)
            if held { releaseHeld(cid) }
            return
        }
        if lastSeq != nil && !held {
            guard resuming[cid] == nil else {
                reply(error: .invalid("channel \(cid) is being resumed already; wait for channel.resumed"), requestID: requestID)
                return
            }
            resuming[cid] = []
        }
        watched.insert(cid)
        let service = gateway.service
        began()
        service.watch(connectionID: connectionID, userID: userID, cid: cid, resumingAfter: lastSeq, maxResumeEvents: limits.maxResumeEvents)
            .flatMap { resume in
                service.read { engine in
                    (state: try ResultJSON.channelState(engine: engine, cid: cid, viewer: userID, watcherCount: service.clusterWatcherCount(cid)), counts: engine.counts(for: userID), resume: resume)
                }
            }
            .hop(to: eventLoop).assumeIsolated().whenComplete { outcome in
                switch outcome {
                case .success(let answer):
                    self.reply(result: answer.state, requestID: requestID)
                    if let resume = answer.resume { self.finishResume(resume, counts: answer.counts) }
                case .failure(let error):
                    self.watched.remove(cid)
                    self.reply(error: WireError(any: error), requestID: requestID)
                    if lastSeq != nil { self.releaseHeld(cid) }
                }
                self.answered()
            }
    }

    /// Sends the replayed events merged in channel order with the user's own notifications that
    /// reached the connection while it was held (those are not in the replay), then the marker, then
    /// the live events after the seam.
    private func finishResume(_ resume: ChannelResume, counts: UnreadCounts) {
        let metrics = gateway.metrics
        switch resume.outcome {
        case .replayed(let events):
            let held = resuming.removeValue(forKey: resume.cid) ?? []
            // A connection that watched already got the watchers' events live: never twice.
            let replayedSeqs = Set(events.compactMap(\.channelSeq))
            var early = held.filter { ($0.channelSeq ?? .max) <= resume.head && !replayedSeqs.contains($0.channelSeq ?? -1) }[...]
            for event in events {
                while let next = early.first, let seq = next.channelSeq, seq < event.channelSeq ?? .max {
                    write(next.frame)
                    early.removeFirst()
                }
                sendJSON(EncodedEvent(stored: event.json, type: event.type).json(for: counts), type: event.type)
            }
            for next in early { write(next.frame) }
            metrics.resumed(replayedEvents: events.count)
            sendJSON(Self.resumeMarker(resume, replayed: events.count), type: "channel.resumed")
            for next in held where (next.channelSeq ?? .max) > resume.head { write(next.frame) }
        case .unavailable:
            metrics.resumeFailed.increment()
            sendJSON(Self.resumeMarker(resume, replayed: 0), type: "channel.resume_failed")
            releaseHeld(resume.cid)
        }
    }

    /// Writes the live events of `cid` held during a resume that did not replay.
    private func releaseHeld(_ cid: ChannelCID) {
        guard let held = resuming.removeValue(forKey: cid) else { return }
        for next in held { write(next.frame) }
    }

    // MARK: Events out

    func deliver(frame: ByteBuffer, type: String, cid: ChannelCID?, channelSeq: Int64?) {
        guard session != nil else { return }
        if !resuming.isEmpty, let cid, resuming[cid] != nil {
            resuming[cid]!.append((frame, channelSeq))
            return
        }
        guard connectionID != nil else {
            // Registered but the first health.check is not out yet: it must come first.
            framesBeforeHealthCheck.append(frame)
            return
        }
        write(frame)
    }

    /// Writes one event frame, closing the connection as a slow consumer (4009) when its outbound
    /// queue stayed over the limit for the grace period or passed the hard limit.
    private func write(_ frame: ByteBuffer) {
        guard let session, admitsOutbound(session) else { return }
        if session.send(encodedFrame: frame) { gateway.metrics.framesOut.increment() }
    }

    /// Whether one more frame may be queued for the client: every frame (events, replies, errors,
    /// resume batches) counts against the outbound limit. A client that stayed over
    /// ``GatewayLimits/maxOutboundBufferBytes`` for the grace period, or passed the hard limit, is
    /// closed as a slow consumer (4009) and nothing more is queued.
    private func admitsOutbound(_ session: WebSocketSession) -> Bool {
        let limits = gateway.limits
        // A writable socket holds less than the channel's high-water mark: no need to ask how much.
        let buffered = session.isWritable && limits.maxOutboundBufferBytes >= GatewayLimits.channelHighWaterMark
            ? 0 : session.bufferedOutboundBytes
        if buffered > limits.maxOutboundBufferBytes {
            let now = NIODeadline.now()
            let since = overLimitSince ?? now
            overLimitSince = since
            if buffered > limits.maxOutboundBufferBytes * GatewayLimits.hardOutboundLimitFactor
                || now - since > .milliseconds(Int64(limits.slowConsumerGraceMilliseconds)) {
                slowConsumer(session, buffered: buffered, reason: "outbound buffer over \(limits.maxOutboundBufferBytes) bytes for too long")
                return false
            }
        } else {
            overLimitSince = nil
        }
        return true
    }

    private func sendJSON(_ bytes: [UInt8], type: String) {
        guard let session, admitsOutbound(session) else { return }
        var buffer = ByteBuffer()
        buffer.writeBytes(bytes)
        guard session.send(text: buffer) else { return }
        gateway.metrics.framesOut.increment()
        if type == "health.check" { gateway.metrics.fannedOut(type: type, recipients: 1) }
    }

    private func reply(result: [UInt8], requestID: String?) {
        var w = JSONWriter(capacity: result.count + 64)
        w.beginObject()
        w.field("type", "reply")
        w.fieldIfPresent("request_id", requestID)
        w.key("result")
        w.raw(result)
        w.endObject()
        sendJSON(w.bytes, type: "reply")
    }

    /// Answers a command with an error event; the refusal is logged once (rate-limited), like a REST
    /// error, with the connection, user and peer.
    private func reply(error: WireError, requestID: String?) {
        gateway.refusals.refused(error.code, [
            "status": "\(error.httpStatus)", "connection_id": "\(connectionID ?? "-")", "user_id": "\(userID ?? "-")",
            "peer": "\(peer)", "request_id": "\(requestID ?? "-")", "message": "\(error.message)",
        ])
        sendJSON(Self.errorEvent(error, requestID: requestID), type: "error")
    }

    // MARK: JSON

    private static let emptyObject: [UInt8] = Array("{}".utf8)

    static func errorEvent(_ error: WireError, requestID: String?) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.field("type", "error")
        w.fieldIfPresent("request_id", requestID)
        w.key("error")
        error.write(into: &w)
        w.endObject()
        return w.bytes
    }

    /// `health.check` with `connection_id` and `me` (the user with privacy settings and unread counts).
    static func healthCheck(engine: ReceiptsEngine, userID: String, connectionID: String) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.field("type", "health.check")
        w.field("connection_id", connectionID)
        w.field("cid", "*")
        w.field("created_at", WallClock.now())
        w.key("custom")
        w.beginObject()
        w.endObject()
        if let user = engine.users[userID] {
            w.key("me")
            StreamJSON.write(ownUser: user, counts: engine.counts(for: userID), into: &w)
        }
        w.endObject()
        return w.bytes
    }

    /// `channel.resumed` (the missed events are out; live ones follow) or `channel.resume_failed` (the
    /// client must re-read the channel's state), with the sequences they cover.
    static func resumeMarker(_ resume: ChannelResume, replayed: Int) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        switch resume.outcome {
        case .replayed: w.field("type", "channel.resumed")
        case .unavailable: w.field("type", "channel.resume_failed")
        }
        w.field("cid", resume.cid.description)
        w.field("channel_id", resume.cid.id)
        w.field("channel_type", resume.cid.type)
        w.field("created_at", WallClock.now())
        w.field("last_seq", Int(resume.after))
        w.field("channel_seq", Int(resume.head))
        switch resume.outcome {
        case .replayed: w.field("replayed", replayed)
        case .unavailable(let reason): w.field("reason", reason)
        }
        w.endObject()
        return w.bytes
    }

    static func makeConnectionID() -> String {
        let a = UInt64.random(in: .min ... .max)
        let b = UInt64.random(in: .min ... .max)
        return String(a, radix: 16) + String(b, radix: 16)
    }
}
