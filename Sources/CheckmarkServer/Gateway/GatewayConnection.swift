import CheckmarkCore
import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import CoreMetrics
import Logging
import NIOCore

/// One client connection of `/connect`: authenticates it, registers it with the service, answers
/// its commands and writes the events the service fans out to it. Everything runs on ``eventLoop``.
final class GatewayConnection: WebSocketApplication, EventSink {
    let eventLoop: any EventLoop
    private let gateway: Gateway
    private let authentication: Result<GatewayAuthenticator.Identity, GatewayAuthenticator.Refusal>
    private var session: WebSocketSession?
    private var connectionID: String?
    private var userID: String?
    private var holdsSlot = false
    private var gone = false
    private var watched: Set<ChannelCID> = []
    private var bucket: TokenBucket
    private var refusedInARow = 0
    /// Events fanned out between registration and the first health.check, sent right after it.
    private var framesBeforeHealthCheck: [ByteBuffer] = []
    /// When the outbound buffer last went over the limit (nil while under it).
    private var overLimitSince: NIODeadline?

    init(eventLoop: any EventLoop, gateway: Gateway, authentication: Result<GatewayAuthenticator.Identity, GatewayAuthenticator.Refusal>) {
        self.eventLoop = eventLoop
        self.gateway = gateway
        self.authentication = authentication
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
        let connectionID = Self.makeConnectionID()
        let service = gateway.service
        let userID = identity.userID
        let details = identity.details
        // Profile fields sent with the connection update the user (creating it if it is new).
        service.read { engine in engine.users[userID] != nil }
            .flatMap { exists -> EventLoopFuture<ReceiptsOutcome> in
                if exists {
                    let patch = details.filter { $0.0 == "name" || $0.0 == "image" || !User.reservedFields.contains($0.0) }
                    return patch.isEmpty ? service.engineLoop.makeSucceededFuture(.unchanged) : service.submit(.updateUser(UserPatch(id: userID, set: patch)))
                }
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
                    for frame in early { self.deliver(frame: frame, type: "") }
                case .failure(let error):
                    let wire = WireError(any: error)
                    self.refuse(wire, code: wire.code == "unknown_user" ? GatewayCloseCode.unknownUser : GatewayCloseCode.unavailable)
                }
            }
    }

    func disconnected(_ session: WebSocketSession, code: WebSocketCloseCode?) {
        guard !gone else { return }
        gone = true
        self.session = nil
        gateway.metrics.connections.decrement()
        gateway.closed(self)
        if let connectionID { _ = gateway.service.submit(.disconnect(connectionID: connectionID)) }
        if holdsSlot, let userID { gateway.counter.release(userID) }
    }

    func close(code: WebSocketCloseCode, reason: String) {
        session?.close(code: code, reason: reason)
    }

    private func refuse(_ error: WireError, code: WebSocketCloseCode) {
        sendJSON(Self.errorEvent(error, requestID: nil), type: "error")
        session?.close(code: code, reason: error.message)
    }

    // MARK: Commands

    func received(_ message: WebSocketMessage, on session: WebSocketSession) {
        gateway.metrics.framesIn.increment()
        guard case .text(let buffer) = message else {
            reply(error: .invalid("binary messages are not supported; send JSON text"), requestID: nil)
            return
        }
        guard bucket.take(now: .now()) else {
            refusedInARow += 1
            if refusedInARow > gateway.limits.commandBurst {
                refuse(.rateLimited("more than \(gateway.limits.commandsPerSecond) commands a second, for too long"), code: GatewayCloseCode.rateLimited)
            } else {
                reply(error: .rateLimited("more than \(gateway.limits.commandsPerSecond) commands a second; slow down"), requestID: nil)
            }
            return
        }
        refusedInARow = 0
        let request: GatewayRequest
        switch GatewayRequest.parse(buffer.readableBytesView) {
        case .failure(let failure):
            reply(error: failure.error, requestID: failure.requestID)
            return
        case .success(let parsed):
            request = parsed
        }
        if case .healthCheck = request.kind {
            guard let connectionID, let userID else { return }
            let service = gateway.service
            service.read { engine in Self.healthCheck(engine: engine, userID: userID, connectionID: connectionID) }
                .hop(to: eventLoop).assumeIsolated().whenSuccess { self.sendJSON($0, type: "health.check") }
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
        case .watch(let cid):
            if !watched.contains(cid) && watched.count >= gateway.limits.maxWatchedChannelsPerConnection {
                reply(error: WireError(code: "too_many_watched_channels",
                                       message: "a connection may watch at most \(gateway.limits.maxWatchedChannelsPerConnection) channels",
                                       httpStatus: 429, streamCode: 9), requestID: request.requestID)
                return
            }
            watched.insert(cid)
            result = service.submit(.watch(connectionID: connectionID, cid: cid))
                .flatMap { _ in service.read { engine in try ResultJSON.channelState(engine: engine, cid: cid, viewer: userID) } }
        case .stopWatching(let cid):
            watched.remove(cid)
            result = service.submit(.stopWatching(connectionID: connectionID, cid: cid)).map { _ in Self.emptyObject }
        case .sendMessage(let cid, let draft):
            result = service.submit(.sendMessage(cid: cid, userID: userID, draft: draft)).map(ResultJSON.message)
        case .markRead(let cid, let messageID):
            result = service.submit(.markRead(cid: cid, userID: userID, messageID: messageID)).map { _ in Self.emptyObject }
        case .markReadMany(let targets):
            result = service.submit(.markReadMany(userID: userID, channels: targets)).map { _ in Self.emptyObject }
        case .markUnread(let cid, let target):
            result = service.submit(.markUnread(cid: cid, userID: userID, from: target)).map { _ in Self.emptyObject }
        case .markDelivered(let latest):
            result = service.submit(.markDelivered(userID: userID, latest: latest)).map { _ in Self.emptyObject }
        }
        let requestID = request.requestID
        let kind = request.kind
        result.hop(to: eventLoop).assumeIsolated().whenComplete { outcome in
            switch outcome {
            case .success(let json):
                self.reply(result: json, requestID: requestID)
            case .failure(let error):
                if case .watch(let cid) = kind { self.watched.remove(cid) }
                self.reply(error: WireError(any: error), requestID: requestID)
            }
        }
    }

    // MARK: Events out

    func deliver(frame: ByteBuffer, type: String) {
        guard let session else { return }
        guard connectionID != nil else {
            // Registered but the first health.check is not out yet: it must come first.
            framesBeforeHealthCheck.append(frame)
            return
        }
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
                gateway.metrics.slowConsumerDisconnects.increment()
                gateway.logger.info("slow consumer disconnected", metadata: [
                    "connection_id": "\(connectionID ?? "-")", "buffered_bytes": "\(buffered)",
                ])
                session.close(code: GatewayCloseCode.slowConsumer, reason: "outbound buffer over \(limits.maxOutboundBufferBytes) bytes for too long")
                self.session = nil
                return
            }
        } else {
            overLimitSince = nil
        }
        if session.send(encodedFrame: frame) { gateway.metrics.framesOut.increment() }
    }

    private func sendJSON(_ bytes: [UInt8], type: String) {
        guard let session else { return }
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

    private func reply(error: WireError, requestID: String?) {
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
        if let user = engine.users[userID] {
            let counts = engine.counts(for: userID)
            var me = JSONWriter()
            StreamJSON.write(user: user, into: &me, includePrivacy: true)
            var bytes = me.bytes
            bytes.removeLast()  // reopen the user object to add the counts
            bytes.append(contentsOf: Array(#","total_unread_count":\#(counts.totalUnread),"unread_count":\#(counts.totalUnread),"unread_channels":\#(counts.unreadChannels)}"#.utf8))
            w.key("me")
            w.raw(bytes)
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
