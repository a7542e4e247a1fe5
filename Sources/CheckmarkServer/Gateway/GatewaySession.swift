import CheckmarkCore
import CheckmarkStorage
import CheckmarkWire
import CheckmarkWebSocket
import NIOCore

/// The rules of one `/connect` connection, as a pure state machine: inputs (the socket's messages,
/// the service's answers, events fanned out, writability, timers) go in, the actions to perform come
/// out (frames to send, service calls, closes, reading paused or resumed). No I/O and no clock of its
/// own: time comes in as values. ``GatewayConnection`` performs the actions.
struct GatewaySession {
    enum State: Equatable {
        /// Opened; the credentials are being checked, then (with the user they name) a connection
        /// slot taken.
        case authenticating(userID: String?)
        /// Holding a slot; the user is being updated and the connection registered with the service.
        case registering(userID: String)
        /// The first `health.check` is out; commands are answered.
        case ready(connectionID: String, userID: String)
        /// The server closed it (or is closing it) and waits for the socket to go; what it still holds
        /// (a registration, a slot) is given back then.
        case closing(connectionID: String?, userID: String?, holdsSlot: Bool)
        /// The socket is gone; everything is given back.
        case closed
    }

    enum Input {
        /// The WebSocket is open, with the outcome of the credentials check.
        case opened(Result<GatewayAuthenticator.Identity, GatewayAuthenticator.Refusal>)
        /// The connection slot (``GatewayLimits``) was taken, or could not be: why.
        case slotAcquired
        case slotRefused(reason: String)
        /// The connection is registered with the service; its first `health.check`.
        case registered(connectionID: String, healthCheck: ByteBuffer)
        case registrationFailed(any Error)
        /// A text or binary message from the client.
        case textReceived(ByteBuffer, now: NIODeadline)
        case binaryReceived(now: NIODeadline)
        /// Answers of the service to the actions ``Action/submit(_:connectionID:userID:)`` and
        /// ``Action/watch(_:lastSeq:requestID:connectionID:userID:)``.
        case commandAnswered(requestID: String?, Result<[UInt8], WireError>)
        case watchAnswered(ChannelCID, lastSeq: Int64?, requestID: String?, Result<WatchAnswer, WireError>, at: Timestamp)
        /// A page of a replay was read (``Action/readReplayPage(_:expected:)``), or why it could not be.
        case replayPageRead(ChannelCID, Result<ChannelResume.Page, ChannelResume.UnavailableReplay>, at: Timestamp)
        /// What ``Action/continueReplay`` asked for: the frames before it were queued.
        case replayContinued
        /// An event's frame fanned out to this connection.
        case eventFannedOut(ByteBuffer, cid: ChannelCID?, channelSeq: Int64?, at: Timestamp)
        /// Live events held for resumes passed the outbound limit (``FanOutDisposition/heldPastLimit``).
        case heldPastLimit(at: Timestamp)
        case writabilityChanged(isWritable: Bool)
        /// The slow-consumer timer fired; what the socket holds now (for the log).
        case slowConsumerTimerFired(bufferedBytes: Int)
        /// The server closes every connection (shutdown, storage failure).
        case closeRequested(GatewayRefusal, reason: String)
        case disconnected(WebSocketCloseCode?)
    }

    /// What a watch found: the channel's state (the reply's result), the user's counts, and the resume.
    struct WatchAnswer {
        var state: [UInt8]
        var counts: UnreadCounts
        var resume: ChannelResume?
    }

    /// What a text message sent is, for the metrics.
    enum Sent: Equatable {
        case reply, error, healthCheck, replayedEvent, resumeMarker
    }

    enum Metric: Equatable {
        case authenticationFailed(AuthFailureReason)
        case slowConsumerDisconnect
        case resumed(replayedEvents: Int)
        case resumeFailed
    }

    /// A refusal for the refusal log, with the connection it happened on.
    struct RefusalNote: Equatable {
        enum Kind: Equatable {
            /// The connection is closed with this code.
            case closed(WebSocketCloseCode)
            /// A command is answered with an error (with its HTTP status).
            case answered(status: Int, requestID: String?)
            /// The connection is closed as a slow consumer, holding this many bytes.
            case slowConsumer(WebSocketCloseCode, bufferedBytes: Int)
        }
        var code: String
        var kind: Kind
        var message: String
        var connectionID: String?
        var userID: String?
    }

    enum Action: Equatable {
        /// A message the gateway wrote itself (``GatewayEnvelope``).
        case sendText(ByteBuffer, Sent)
        /// A fanned-out event's complete frame.
        case sendFrame(ByteBuffer)
        case close(WebSocketCloseCode, reason: String)
        case setReading(Bool)
        case acquireSlot
        case releaseSlot
        /// Update or create the user from the connection's profile, register the connection, and
        /// read its first `health.check`.
        case register(userID: String)
        case unregister(connectionID: String)
        /// Answer the client's keepalive with a `health.check` carrying `connection_id` and no `me`: only
        /// the connection's first has `me` (Stream's Android SDK takes a `health.check` with `me` for a
        /// new connection and re-runs its connected handling).
        case answerHealthCheck(connectionID: String)
        case submit(GatewayRequest, connectionID: String, userID: String)
        case watch(ChannelCID, lastSeq: Int64?, requestID: String?, connectionID: String, userID: String)
        /// Read the next page of this resume's replay, from `channel_seq` `expected` on
        /// (``Input/replayPageRead(_:_:at:)`` answers).
        case readReplayPage(ChannelResume, expected: Int64)
        /// Come back with ``Input/replayContinued`` once the actions before this one are performed, so
        /// that the next page is read only if the socket took what was queued.
        case continueReplay
        case startSlowConsumerTimer(TimeAmount)
        case cancelSlowConsumerTimer
        case count(Metric)
        case logRefusal(RefusalNote)
        /// The socket is gone: the connection's last log line and metrics.
        case ended(connectionID: String?, userID: String?, code: WebSocketCloseCode?)
    }

    // Stored properties are laid out in the order written: the narrow ones together, so that no
    // padding follows each of them (every connection holds a session; `ConnectionObjectFootprintTests`
    // hold its size).
    /// The gateway's limits, shared by its sessions.
    private let sharedLimits: SharedValue<GatewayLimits>
    var limits: GatewayLimits { sharedLimits.value }
    private var bucket: TokenBucket
    /// When the current one-second window of refusals for the rate began.
    private var refusalWindowStart = NIODeadline.uptimeNanoseconds(0)
    private var buffer = ResumeBuffer()
    /// Replays under way (the first) and waiting their turn, in the order their watches were answered.
    private var replays: [ResumeReplay] = []
    private var watched: Set<ChannelCID> = []
    /// Channels named by `resume` on connect, watched one at a time after the first `health.check`;
    /// the first is the one being watched while ``connectResumeInFlight``.
    private var resumeOnConnect: [(ChannelCID, Int64)] = []
    /// Commands refused for the rate in the current window (stops counting at `Int32.max`).
    private var refusedInWindow: Int32 = 0
    /// Commands received and not answered yet (reading pauses at ``GatewayLimits/maxCommandsInFlight``).
    /// (At most ``GatewayLimits/maxCommandsInFlight`` plus the commands of one read of 64 KiB.)
    private var inFlight: Int16 = 0
    /// Whether a watch named by `resume` on connect is being answered (they are made one at a time).
    private var connectResumeInFlight = false
    private(set) var state: State = .authenticating(userID: nil)
    /// Whether frames may still be queued (not after a slow-consumer close, nor once gone).
    private var outboundOpen = true
    /// Whether the socket is writable and its reading paused.
    private var isWritable = true
    private var readingPaused = false
    private var timerArmed = false
    /// When the outbound buffer last went over the limit (nil while under it).
    private var overLimitSince: NIODeadline?

    init(limits: SharedValue<GatewayLimits>, now: NIODeadline) {
        sharedLimits = limits
        bucket = TokenBucket(rate: limits.value.commandsPerSecond, burst: limits.value.commandBurst, now: now)
    }

    /// A session with limits of its own.
    init(limits: GatewayLimits, now: NIODeadline) {
        self.init(limits: SharedValue(limits), now: now)
    }

    var connectionID: String? {
        switch state {
        case .ready(let connectionID, _): connectionID
        case .closing(let connectionID, _, _): connectionID
        case .authenticating, .registering, .closed: nil
        }
    }

    var userID: String? {
        switch state {
        case .registering(let userID), .ready(_, let userID): userID
        case .closing(_, let userID, _): userID
        case .authenticating, .closed: nil
        }
    }

    private var holdsSlot: Bool {
        switch state {
        case .registering, .ready: true
        case .closing(_, _, let holdsSlot): holdsSlot
        case .authenticating, .closed: false
        }
    }

    // MARK: Inputs

    mutating func handle(_ input: Input) -> [Action] {
        switch input {
        case .opened(let authentication): opened(authentication)
        case .slotAcquired: slotAcquired()
        case .slotRefused(let reason): refuse(.tooManyConnections(reason), .tooManyConnections)
        case .registered(let connectionID, let healthCheck): registered(connectionID, healthCheck: healthCheck)
        case .registrationFailed(let error): registrationFailed(error)
        case .textReceived(let text, let now): received(text, now: now)
        case .binaryReceived(let now): received(nil, now: now)
        case .commandAnswered(let requestID, let result): commandAnswered(requestID, result)
        case .watchAnswered(let cid, let lastSeq, let requestID, let result, let now):
            watchAnswered(cid, lastSeq: lastSeq, requestID: requestID, result, now: now)
        case .replayPageRead(let cid, let page, let now): replayPageRead(cid, page, now: now)
        case .replayContinued: continueReplay()
        case .eventFannedOut(let frame, let cid, let channelSeq, let now):
            switch eventFannedOut(frame, cid: cid, channelSeq: channelSeq) {
            case .send: [.sendFrame(frame)]
            case .held, .dropped: []
            case .heldPastLimit: heldPastLimit(now: now)
            }
        case .heldPastLimit(let now): heldPastLimit(now: now)
        case .writabilityChanged(let isWritable): writabilityChanged(isWritable)
        case .slowConsumerTimerFired(let buffered): slowConsumerTimerFired(buffered: buffered)
        case .closeRequested(let refusal, let reason): closeRequested(refusal, reason: reason)
        case .disconnected(let code): disconnected(code)
        }
    }

    /// Whether one more frame may be queued for the client, which holds `buffered` bytes: every frame
    /// (events, replies, errors, resume batches) counts against the outbound limit. A client that
    /// stayed over ``GatewayLimits/maxOutboundBufferBytes`` for the grace period, or passed the hard
    /// limit, is closed as a slow consumer (4009) and nothing more is queued. Nil: send it; else drop
    /// it and perform these actions. `now` is read only when the client is over the limit.
    mutating func outboundQueued(buffered: Int, now: @autoclosure () -> NIODeadline) -> [Action]? {
        guard outboundOpen else { return [] }
        guard buffered > limits.maxOutboundBufferBytes else {
            overLimitSince = nil
            return nil
        }
        let now = now()
        let since = overLimitSince ?? now
        overLimitSince = since
        if buffered > limits.maxOutboundBufferBytes * GatewayLimits.hardOutboundLimitFactor || now - since > grace {
            return slowConsumer(buffered: buffered, reason: "outbound buffer over \(limits.maxOutboundBufferBytes) bytes for too long")
        }
        return nil
    }

    private var grace: TimeAmount { .milliseconds(Int64(limits.slowConsumerGraceMilliseconds)) }

    // MARK: Connecting

    private mutating func opened(_ authentication: Result<GatewayAuthenticator.Identity, GatewayAuthenticator.Refusal>) -> [Action] {
        switch state {
        case .authenticating: break
        case .registering, .ready, .closing, .closed: return []
        }
        switch authentication {
        case .failure(let refusal):
            return [.count(.authenticationFailed(refusal.reason))] + refuse(refusal.error, .authentication(refusal.reason))
        case .success(let identity):
            state = .authenticating(userID: identity.userID)
            resumeOnConnect = identity.resume
            // Channels resumed on connect: their events wait from the start, so that the replay comes in order.
            for (cid, _) in identity.resume { buffer.beginResume(cid) }
            return [.acquireSlot]
        }
    }

    private mutating func slotAcquired() -> [Action] {
        guard case .authenticating(let userID?) = state else { return [] }
        state = .registering(userID: userID)
        return [.register(userID: userID)]
    }

    private mutating func registered(_ connectionID: String, healthCheck: ByteBuffer) -> [Action] {
        switch state {
        case .registering(let userID):
            state = .ready(connectionID: connectionID, userID: userID)
            var actions: [Action] = [.sendText(healthCheck, .healthCheck)]
            actions += buffer.takeBeforeHealthCheck().map { .sendFrame($0) }
            return actions + replayWaiting()
        case .closing(nil, let userID, let holdsSlot):
            // Closed by the server while registering: given back when the socket goes.
            state = .closing(connectionID: connectionID, userID: userID, holdsSlot: holdsSlot)
            return []
        case .closed:
            // Gone while registering: undo the registration.
            return [.unregister(connectionID: connectionID)]
        case .authenticating, .ready, .closing:
            return [.unregister(connectionID: connectionID)]
        }
    }

    private mutating func registrationFailed(_ error: any Error) -> [Action] {
        switch state {
        case .registering: return refuse(WireError(any: error), GatewayRefusal(connectFailure: error))
        case .authenticating, .ready, .closing, .closed: return []
        }
    }

    // MARK: Commands

    private mutating func received(_ text: ByteBuffer?, now: NIODeadline) -> [Action] {
        switch state {
        case .authenticating, .registering, .ready: break
        case .closing, .closed: return []
        }
        // Every message, binary ones too, is counted against the rate before it is answered.
        guard bucket.take(now: now) else {
            // Sustained excess closes (4008): more refusals within one second than the burst allows. A
            // refilled token now and then does not reset it (a flood faster than the rate never ends
            // in a run of refusals long enough otherwise).
            if now - refusalWindowStart > .seconds(1) {
                refusalWindowStart = now
                refusedInWindow = 0
            }
            if refusedInWindow < .max { refusedInWindow += 1 }
            if Int(refusedInWindow) > limits.commandBurst {
                return refuse(.rateLimited("more than \(limits.commandsPerSecond) commands a second, for too long"), .rateLimited)
            }
            return replyError(.rateLimited("more than \(limits.commandsPerSecond) commands a second; slow down"), requestID: nil)
        }
        guard let text else {
            return replyError(.invalid("binary messages are not supported; send JSON text"), requestID: nil)
        }
        let request: GatewayRequest
        switch GatewayRequest.parse(text.readableBytesView, limits: limits.json) {
        case .failure(let failure):
            if failure.limit != nil { return refuse(failure.error, .jsonTooLarge) }
            return replyError(failure.error, requestID: failure.requestID)
        case .success(let parsed):
            request = parsed
        }
        guard case .ready(let connectionID, let userID) = state else {
            switch request.kind {
            case .healthCheck: return []
            case .watch, .stopWatching, .sendMessage, .markRead, .markReadMany, .markThreadRead, .markUnread, .markDelivered:
                return replyError(WireError(code: "not_connected", message: "wait for the health.check event before sending commands",
                                            httpStatus: 409, streamCode: 4), requestID: request.requestID)
            }
        }
        switch request.kind {
        case .healthCheck:
            return [.answerHealthCheck(connectionID: connectionID)]
        case .watch(let cid, let lastSeq):
            return watch(cid, lastSeq: lastSeq, requestID: request.requestID)
        case .stopWatching(let cid):
            watched.remove(cid)
            return began() + [.submit(request, connectionID: connectionID, userID: userID)]
        case .sendMessage, .markRead, .markReadMany, .markThreadRead, .markUnread, .markDelivered:
            return began() + [.submit(request, connectionID: connectionID, userID: userID)]
        }
    }

    private mutating func commandAnswered(_ requestID: String?, _ result: Result<[UInt8], WireError>) -> [Action] {
        let sent: [Action]
        switch result {
        case .success(let json): sent = [.sendText(GatewayEnvelope.reply(result: json, requestID: requestID), .reply)]
        case .failure(let error): sent = replyError(error, requestID: requestID)
        }
        return sent + answered()
    }

    /// Starts watching `cid`; the reply is the channel's state. With `lastSeq`, the events missed after
    /// it follow the reply, then `channel.resumed` (or `channel.resume_failed`), then the live events,
    /// which wait meanwhile. `held`: the channel's events are held already (a resume named on connect).
    private mutating func watch(_ cid: ChannelCID, lastSeq: Int64?, requestID: String?, held: Bool = false) -> [Action] {
        guard case .ready(let connectionID, let userID) = state else { return [] }
        if !watched.contains(cid) && watched.count >= limits.maxWatchedChannelsPerConnection {
            let error = WireError(code: "too_many_watched_channels",
                                  message: "a connection may watch at most \(limits.maxWatchedChannelsPerConnection) channels",
                                  httpStatus: 429, streamCode: 9)
            return replyError(error, requestID: requestID) + (held ? buffer.release(cid).map { .sendFrame($0) } : [])
        }
        if lastSeq != nil && !held {
            guard buffer.beginResume(cid) else {
                return replyError(.invalid("channel \(cid) is being resumed already; wait for channel.resumed"), requestID: requestID)
            }
        }
        watched.insert(cid)
        if held { connectResumeInFlight = true }
        return began() + [.watch(cid, lastSeq: lastSeq, requestID: requestID, connectionID: connectionID, userID: userID)]
    }

    private mutating func watchAnswered(_ cid: ChannelCID, lastSeq: Int64?, requestID: String?, _ result: Result<WatchAnswer, WireError>,
                                        now: Timestamp) -> [Action] {
        if connectResumeInFlight, lastSeq != nil, requestID == Self.connectResumeRequestID(cid), resumeOnConnect.first?.0 == cid {
            resumeOnConnect.removeFirst()
            connectResumeInFlight = false
        }
        var actions: [Action]
        switch result {
        case .success(let answer):
            actions = [.sendText(GatewayEnvelope.reply(result: answer.state, requestID: requestID), .reply)]
            if let resume = answer.resume { actions += finishResume(resume, counts: answer.counts, now: now) }
        case .failure(let error):
            watched.remove(cid)
            actions = replyError(error, requestID: requestID)
            if lastSeq != nil { actions += buffer.release(cid).map { .sendFrame($0) } }
        }
        return actions + answered() + replayWaiting()
    }

    /// When a replay or a watch named on connect waits: come back once what was queued before is
    /// (``Action/continueReplay``), so that the next page or watch goes only if the socket took it.
    private func replayWaiting() -> [Action] {
        replays.isEmpty && resumeOnConnect.isEmpty ? [] : [.continueReplay]
    }

    /// Starts a resume's replay, or says why there is none: the replay's pages come as the socket
    /// drains (``continueReplay()``), then the marker; the live events of the channel wait meanwhile.
    private mutating func finishResume(_ resume: ChannelResume, counts: UnreadCounts, now: Timestamp) -> [Action] {
        guard outboundOpen else { return [] }
        switch resume.outcome {
        case .replay:
            let replay = ResumeReplay(resume, counts: counts)
            guard resume.head > resume.after else { return end(replay, now: now) }
            replays.append(replay)
            return []
        case .unavailable(let reason):
            return resumeFailed(resume, reason: reason, now: now)
        }
    }

    private mutating func resumeFailed(_ resume: ChannelResume, reason: String, now: Timestamp) -> [Action] {
        let marker = GatewayEnvelope.resumeMarker(cid: resume.cid, after: resume.after, head: resume.head, createdAt: now,
                                                  result: .failed(reason: reason))
        return [.count(.resumeFailed), .sendText(marker, .resumeMarker)] + buffer.release(resume.cid).map { .sendFrame($0) }
    }

    /// Reads the next page of the replay under way, unless one is being read, the socket holds what it
    /// was sent (unwritable: the page is read once it drains), or nothing more may be queued.
    /// Once no replay is left, watches the next channel named by `resume` on connect: one at a time,
    /// so that their replies and replays are queued one after the other as the socket drains.
    private mutating func continueReplay() -> [Action] {
        guard outboundOpen, case .ready = state, isWritable else { return [] }
        guard let next = replays.first else { return watchNextResumedOnConnect() }
        guard !next.reading else { return [] }
        replays[0].reading = true
        return [.readReplayPage(next.resume, expected: next.expected)]
    }

    private mutating func watchNextResumedOnConnect() -> [Action] {
        var actions: [Action] = []
        // A channel past the watch limit is refused at once: the next one is tried.
        while !connectResumeInFlight, let next = resumeOnConnect.first {
            let (cid, after) = next
            actions += watch(cid, lastSeq: after, requestID: Self.connectResumeRequestID(cid), held: true)
            if !connectResumeInFlight { resumeOnConnect.removeFirst() }
        }
        return actions
    }

    /// The `request_id` of the reply to a watch named by `resume` on connect.
    private static func connectResumeRequestID(_ cid: ChannelCID) -> String { "resume:\(cid)" }

    /// Sends a page of the replay under way (merged with the held events it lacks), and ends the
    /// replay with its marker once the pages reached the head; a page the journal cannot give ends it
    /// with `channel.resume_failed` (what was sent stays sent; the client re-reads the channel's state).
    private mutating func replayPageRead(_ cid: ChannelCID, _ result: Result<ChannelResume.Page, ChannelResume.UnavailableReplay>,
                                         now: Timestamp) -> [Action] {
        guard outboundOpen, case .ready = state, let current = replays.first, current.resume.cid == cid, current.reading else { return [] }
        replays[0].reading = false
        if current.abandoned {
            // Ended already (``heldPastLimit(now:)``): the page is dropped.
            replays.removeFirst()
            return [.continueReplay]
        }
        switch result {
        case .success(let page):
            replays[0].expected = page.through + 1
            var actions = buffer.page(cid, replayedSeqs: page.events.map(\.channelSeq), through: page.through).map { output -> Action in
                switch output {
                case .replayed(let index):
                    let event = page.events[index]
                    return .sendText(GatewayEnvelope.replayedEvent(stored: event.json, type: event.type, counts: current.counts), .replayedEvent)
                case .held(let frame): return .sendFrame(frame)
                }
            }
            replays[0].replayed += page.events.count
            if page.through >= current.resume.head {
                let finished = replays.removeFirst()
                actions += end(finished, now: now)
            }
            return actions + [.continueReplay]
        case .failure(let unavailable):
            replays.removeFirst()
            return resumeFailed(current.resume, reason: unavailable.reason, now: now) + [.continueReplay]
        }
    }

    /// The end of a replay whose pages reached its head: the held frames and the `channel.resumed`
    /// marker, in ``ResumeBuffer/finish(_:head:)``'s order.
    private mutating func end(_ replay: ResumeReplay, now: Timestamp) -> [Action] {
        let resume = replay.resume
        let held = buffer.finish(resume.cid, head: resume.head)
        let marker = GatewayEnvelope.resumeMarker(cid: resume.cid, after: resume.after, head: resume.head, createdAt: now,
                                                  result: .replayed(replay.replayed))
        return held.beforeMarker.map { .sendFrame($0) } + [.count(.resumed(replayedEvents: replay.replayed)), .sendText(marker, .resumeMarker)]
            + held.afterMarker.map { .sendFrame($0) }
    }

    // MARK: Events out

    /// What becomes of an event frame fanned out to this connection.
    enum FanOutDisposition: Equatable {
        /// Write it now (after the outbound limit's check, ``outboundQueued(buffered:now:)``).
        case send
        /// Kept back: the first `health.check` is not out yet, or its channel is being resumed; it goes
        /// out, in order, when that is done.
        case held
        /// Not for this connection any more: not registered yet, closing or closed.
        case dropped
        /// Kept back, and the frames held (for the first `health.check` or resumes) now pass
        /// ``GatewayLimits/maxOutboundBufferBytes``: replays are to end, or the connection to close
        /// (``Input/heldPastLimit(at:)``).
        case heldPastLimit
    }

    /// An event frame fanned out to this connection (``Input/eventFannedOut(_:cid:channelSeq:at:)``
    /// without the action list, so that the fan-out's per-recipient path allocates nothing).
    mutating func eventFannedOut(_ frame: ByteBuffer, cid: ChannelCID?, channelSeq: Int64?) -> FanOutDisposition {
        switch state {
        case .registering:
            // Registered but the first health.check is not out yet: it must come first.
            _ = buffer.hold(frame, cid: cid, channelSeq: channelSeq, beforeFirstHealthCheck: true)
            return buffer.heldBytes > limits.maxOutboundBufferBytes ? .heldPastLimit : .held
        case .ready:
            guard buffer.hold(frame, cid: cid, channelSeq: channelSeq, beforeFirstHealthCheck: false) else { return .send }
            return buffer.heldBytes > limits.maxOutboundBufferBytes ? .heldPastLimit : .held
        case .authenticating, .closing, .closed:
            return .dropped
        }
    }

    // MARK: Flow control

    private mutating func began() -> [Action] {
        inFlight += 1
        return updateReading()
    }

    private mutating func answered() -> [Action] {
        inFlight -= 1
        return updateReading()
    }

    /// Reads the client's commands only while it reads what it is sent (the socket is writable) and
    /// fewer than ``GatewayLimits/maxCommandsInFlight`` of its commands wait for their answers.
    private mutating func updateReading() -> [Action] {
        guard outboundOpen else { return [] }
        let read = Int(inFlight) < GatewayLimits.maxCommandsInFlight && isWritable
        guard read == readingPaused else { return [] }
        readingPaused = !read
        return [.setReading(read)]
    }

    /// Closes the connection as a slow consumer when it stays unwritable (it does not read what it
    /// was sent) for the grace period: the timer runs while it is unwritable.
    private mutating func writabilityChanged(_ writable: Bool) -> [Action] {
        guard outboundOpen else { return [] }
        isWritable = writable
        var actions = updateReading() + continueReplay()
        if timerArmed {
            timerArmed = false
            actions.append(.cancelSlowConsumerTimer)
        }
        if !writable {
            timerArmed = true
            actions.append(.startSlowConsumerTimer(grace))
        }
        return actions
    }

    /// Live events held back passed the outbound limit. A replay that lasts longer than its
    /// channel's live events can wait (many resumes share the journal reader, or the client reads
    /// slowly) ends with `channel.resume_failed`, the current one first, and the events held for it
    /// go out (the outbound limit's rules apply to them from there); the client re-reads the
    /// channel's state. Still past the limit with no replay left to end (events held for the first
    /// `health.check`, or for a connect watch not answered yet): closed as a slow consumer (4009).
    private mutating func heldPastLimit(now: Timestamp) -> [Action] {
        guard outboundOpen else { return [] }
        var actions: [Action] = []
        var index = 0
        while buffer.heldBytes > limits.maxOutboundBufferBytes, index < replays.count {
            let replay = replays[index]
            guard !replay.abandoned else {
                index += 1
                continue
            }
            let reason = "the live events of channel \(replay.resume.cid) held back during its replay passed "
                + "\(limits.maxOutboundBufferBytes) bytes (max_outbound_buffer); re-read the channel's state"
            if replay.reading {
                // Its page still comes: the entry stays, abandoned, to take it.
                replays[index].abandoned = true
                index += 1
            } else {
                replays.remove(at: index)
            }
            actions += resumeFailed(replay.resume, reason: reason, now: now)
        }
        guard buffer.heldBytes > limits.maxOutboundBufferBytes else { return actions }
        return actions + slowConsumer(buffered: buffer.heldBytes,
                                      reason: "live events held back passed \(limits.maxOutboundBufferBytes) bytes (max_outbound_buffer)")
    }

    private mutating func slowConsumerTimerFired(buffered: Int) -> [Action] {
        timerArmed = false
        guard outboundOpen, !isWritable else { return [] }
        return slowConsumer(buffered: buffered, reason: "did not read what it was sent for \(limits.slowConsumerGraceMilliseconds) ms")
    }

    /// Closes the connection as a slow consumer (4009); nothing more is queued for it.
    private mutating func slowConsumer(buffered: Int, reason: String) -> [Action] {
        let code = WebSocketCloseCode(.slowConsumer)
        var actions: [Action] = [
            .count(.slowConsumerDisconnect),
            .logRefusal(RefusalNote(code: "slow_consumer", kind: .slowConsumer(code, bufferedBytes: buffered), message: reason,
                                    connectionID: connectionID, userID: userID)),
        ]
        if timerArmed {
            timerArmed = false
            actions.append(.cancelSlowConsumerTimer)
        }
        actions.append(.close(code, reason: reason))
        outboundOpen = false
        // Nothing more is sent: what was held or to be replayed is given back now, not when the socket goes.
        replays = []
        buffer = ResumeBuffer()
        state = .closing(connectionID: connectionID, userID: userID, holdsSlot: holdsSlot)
        return actions
    }

    // MARK: Closing

    /// Refuses the connection: the error event, then the close with the refusal's code.
    private mutating func refuse(_ error: WireError, _ refusal: GatewayRefusal) -> [Action] {
        let code = WebSocketCloseCode(refusal)
        let actions: [Action] = [
            .logRefusal(RefusalNote(code: error.code, kind: .closed(code), message: error.message, connectionID: connectionID, userID: userID)),
            .sendText(errorEnvelope(error, requestID: nil), .error),
            .close(code, reason: error.message),
        ]
        state = .closing(connectionID: connectionID, userID: userID, holdsSlot: holdsSlot)
        return actions
    }

    /// Answers a command with an error event; the refusal is logged (rate-limited), like a REST error.
    private func replyError(_ error: WireError, requestID: String?) -> [Action] {
        [
            .logRefusal(RefusalNote(code: error.code, kind: .answered(status: error.httpStatus, requestID: requestID), message: error.message,
                                    connectionID: connectionID, userID: userID)),
            .sendText(errorEnvelope(error, requestID: requestID), .error),
        ]
    }

    private func errorEnvelope(_ error: WireError, requestID: String?) -> ByteBuffer {
        GatewayEnvelope.error(error, requestID: requestID)
    }

    private mutating func closeRequested(_ refusal: GatewayRefusal, reason: String) -> [Action] {
        switch state {
        case .authenticating, .registering, .ready: break
        case .closing, .closed: return []
        }
        state = .closing(connectionID: connectionID, userID: userID, holdsSlot: holdsSlot)
        return [.close(WebSocketCloseCode(refusal), reason: reason)]
    }

    private mutating func disconnected(_ code: WebSocketCloseCode?) -> [Action] {
        var actions: [Action] = []
        if timerArmed {
            timerArmed = false
            actions.append(.cancelSlowConsumerTimer)
        }
        switch state {
        case .closed: return actions
        case .authenticating, .registering, .ready, .closing: break
        }
        let (connectionID, userID, holdsSlot) = (connectionID, userID, holdsSlot)
        actions.append(.ended(connectionID: connectionID, userID: userID, code: code))
        if let connectionID { actions.append(.unregister(connectionID: connectionID)) }
        if holdsSlot { actions.append(.releaseSlot) }
        state = .closed
        outboundOpen = false
        replays = []
        buffer = ResumeBuffer()
        return actions
    }
}
