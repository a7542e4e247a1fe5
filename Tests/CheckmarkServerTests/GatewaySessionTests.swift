import CheckmarkCore
import CheckmarkStorage
import CheckmarkWire
import CheckmarkWebSocket
import NIOCore
import Testing

@testable import CheckmarkServer

/// Transcripts of ``GatewaySession``: inputs in, the actions expected out, each rendered as one short
/// line. No socket, no service, no clock: time is a value.
enum Transcript {
    static let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let room = ChannelCID(type: "messaging", id: "room")
    static let hall = ChannelCID(type: "messaging", id: "hall")
    static let at = Timestamp(microseconds: 0)

    static func identity(_ userID: String = "alice", resume: [(ChannelCID, Int64)] = []) -> GatewayAuthenticator.Identity {
        GatewayAuthenticator.Identity(userID: userID, details: [], detailsGiven: true, resume: resume)
    }

    static func healthCheck(_ connectionID: String = "c1") -> ByteBuffer {
        GatewayEnvelope.healthCheck(connectionID: connectionID, createdAt: at, me: nil)
    }

    /// A live event frame (the bytes stand for the encoded frame).
    static func live(_ seq: Int64?, _ cid: ChannelCID = room) -> GatewaySession.Input {
        .eventFannedOut(ByteBuffer(string: "live \(cid.id) \(seq.map(String.init) ?? "-")"), cid: cid, channelSeq: seq)
    }

    static func text(_ json: String, at now: NIODeadline = t0) -> GatewaySession.Input {
        .textReceived(ByteBuffer(string: json), now: now)
    }

    static func journal(_ seq: Int64, _ cid: ChannelCID = room) -> JournalEvent {
        JournalEvent(seq: seq, cid: cid, channelSeq: seq, type: "custom.test",
                     audience: nil, json: Array(#"{"type":"custom.test","cid":"\#(cid)","channel_seq":\#(seq)}"#.utf8))
    }

    static func render(_ action: GatewaySession.Action) -> String {
        switch action {
        case .sendText(let text, .replayedEvent):
            let json = String(buffer: text)
            let seq = json.split(separator: "\"channel_seq\":").last.map { String($0.prefix { $0.isNumber }) } ?? "?"
            return "replayed \(seq)"
        case .sendText(let text, .resumeMarker):
            let json = String(buffer: text)
            return json.contains("channel.resumed") ? "marker resumed" : "marker resume_failed"
        case .sendText(let text, .error):
            let json = String(buffer: text)
            let code = json.split(separator: "\"error_code\":\"").last.map { String($0.prefix { $0 != "\"" }) } ?? "?"
            return "error \(code)"
        case .sendText(let text, .reply): return "reply \(String(buffer: text))"
        case .sendText(let text, .healthCheck): return "health.check \(String(buffer: text).contains("\"connection_id\":\"") ? "ok" : "?")"
        case .sendFrame(let frame): return String(buffer: frame)
        case .close(let code, _): return "close \(code.rawValue)"
        case .setReading(let read): return read ? "reading on" : "reading off"
        case .acquireSlot: return "acquire slot"
        case .releaseSlot: return "release slot"
        case .register(let userID): return "register \(userID)"
        case .unregister(let connectionID): return "unregister \(connectionID)"
        case .readHealthCheck(let connectionID, _): return "read health.check \(connectionID)"
        case .submit(let request, _, _): return "submit \(request.requestID ?? "-")"
        case .watch(let cid, let lastSeq, let requestID, _, _): return "watch \(cid) after \(lastSeq.map(String.init) ?? "-") \(requestID ?? "-")"
        case .startSlowConsumerTimer(let grace): return "timer \(grace.nanoseconds / 1_000_000) ms"
        case .cancelSlowConsumerTimer: return "cancel timer"
        case .count(.authenticationFailed(let reason)): return "count auth failure \(reason.rawValue)"
        case .count(.slowConsumerDisconnect): return "count slow consumer"
        case .count(.resumed(let replayed)): return "count resumed \(replayed)"
        case .count(.resumeFailed): return "count resume failed"
        case .logRefusal(let note): return "log \(note.code)"
        case .ended(let connectionID, _, let code): return "ended \(connectionID ?? "-") \(code.map { "\($0.rawValue)" } ?? "-")"
        }
    }

    /// A session and the lines of what it did.
    struct Run {
        var session: GatewaySession
        init(limits: GatewayLimits = GatewayLimits()) { session = GatewaySession(limits: limits, now: Transcript.t0) }

        mutating func callAsFunction(_ input: GatewaySession.Input) -> [String] {
            session.handle(input).map(Transcript.render)
        }

        /// Opens, authenticates and registers the connection: ready, its health.check out.
        static func ready(limits: GatewayLimits = GatewayLimits(), resume: [(ChannelCID, Int64)] = []) -> Run {
            var run = Run(limits: limits)
            _ = run(.opened(.success(Transcript.identity(resume: resume))))
            _ = run(.slotAcquired)
            _ = run(.registered(connectionID: "c1", healthCheck: Transcript.healthCheck()))
            return run
        }
    }
}

@Suite("Gateway session: connecting")
struct GatewaySessionConnectTests {
    @Test func aConnectionIsAuthenticatedTakesASlotRegistersAndStartsWithItsHealthCheck() {
        var run = Transcript.Run()
        #expect(run.session.state == .authenticating(userID: nil))
        #expect(run(.opened(.success(Transcript.identity()))) == ["acquire slot"])
        #expect(run(.slotAcquired) == ["register alice"])
        #expect(run.session.state == .registering(userID: "alice"))
        #expect(run(.registered(connectionID: "c1", healthCheck: Transcript.healthCheck())) == ["health.check ok"])
        #expect(run.session.state == .ready(connectionID: "c1", userID: "alice"))
        #expect(run(Transcript.text(#"{"type":"health.check"}"#)) == ["read health.check c1"])
        #expect(run(.healthCheckAnswered(Transcript.healthCheck())) == ["health.check ok"])
        #expect(run(.disconnected(.normalClosure)) == ["ended c1 1000", "unregister c1", "release slot"])
        #expect(run.session.state == .closed)
    }

    @Test func commandsBeforeTheFirstHealthCheckAreAnsweredNotConnected() {
        var run = Transcript.Run()
        _ = run(.opened(.success(Transcript.identity())))
        _ = run(.slotAcquired)
        #expect(run(Transcript.text(#"{"type":"mark_read","cid":"messaging:room","request_id":"r1"}"#)) == ["log not_connected", "error not_connected"])
        #expect(run(Transcript.text(#"{"type":"health.check"}"#)) == [])
    }

    @Test func aCommandIsSubmittedAndItsAnswerRepliedWithItsRequestID() {
        var run = Transcript.Run.ready()
        #expect(run(Transcript.text(#"{"type":"mark_read","cid":"messaging:room","request_id":"r1"}"#)) == ["submit r1"])
        #expect(run(.commandAnswered(requestID: "r1", .success(Array("{}".utf8)))) == [#"reply {"type":"reply","request_id":"r1","result":{}}"#])
        #expect(run(.commandAnswered(requestID: "r2", .failure(.invalid("no")))) == ["log invalid_argument", "error invalid_argument"])
    }

    @Test func aConnectionClosedWhileRegisteringIsUnregisteredWhenTheRegistrationLands() {
        var run = Transcript.Run()
        _ = run(.opened(.success(Transcript.identity())))
        _ = run(.slotAcquired)
        #expect(run(.disconnected(nil)) == ["ended - -", "release slot"])
        #expect(run(.registered(connectionID: "c1", healthCheck: Transcript.healthCheck())) == ["unregister c1"])
    }

    @Test func aShutdownClosesWithGoingAwayAndGivesBackTheRegistrationWhenTheSocketGoes() {
        var run = Transcript.Run.ready()
        #expect(run(.closeRequested(.shuttingDown, reason: "server shutting down")) == ["close 1001"])
        #expect(run(Transcript.live(1)) == [])
        #expect(run(.disconnected(.goingAway)) == ["ended c1 1001", "unregister c1", "release slot"])
    }
}

@Suite("Gateway session: refusals and their close codes")
struct GatewaySessionRefusalTests {
    static func refused(_ refusal: GatewayAuthenticator.Refusal) -> [String] {
        var run = Transcript.Run()
        return run(.opened(.failure(refusal)))
    }

    @Test func badCredentialsCloseWith4001AndAnExpiredTokenWith4002() {
        #expect(Self.refused(.init(error: .unauthenticated("no key"), reason: .apiKey))
            == ["count auth failure api_key", "log authentication_failed", "error authentication_failed", "close 4001"])
        #expect(Self.refused(.init(error: WireError(code: "token_expired", message: "expired", httpStatus: 401, streamCode: 40), reason: .tokenExpired)).suffix(2) == ["error token_expired", "close 4002"])
        for reason in [AuthFailureReason.tokenMissing, .tokenInvalid, .userMismatch, .malformedRequest] {
            #expect(Self.refused(.init(error: .unauthenticated("x"), reason: reason)).last == "close 4001")
        }
    }

    @Test func aUserOverItsConnectionLimitIsClosedWith4003AndHoldsNoSlot() {
        var run = Transcript.Run()
        _ = run(.opened(.success(Transcript.identity())))
        #expect(run(.slotRefused(reason: "full")) == ["log too_many_connections", "error too_many_connections", "close 4003"])
        #expect(run(.disconnected(GatewayCloseCode.tooManyConnections)) == ["ended - 4003"])
    }

    static func registrationFailed(_ error: any Error) -> [String] {
        var run = Transcript.Run()
        _ = run(.opened(.success(Transcript.identity())))
        _ = run(.slotAcquired)
        return run(.registrationFailed(error))
    }

    @Test func aFailedRegistrationClosesWith4004ForAnUnknownUser4003AtTheUsersLimit1008ForARefusedProfileAnd1011Else() {
        #expect(Self.registrationFailed(ReceiptsError.unknownUser("alice")) == ["log unknown_user", "error unknown_user", "close 4004"])
        #expect(Self.registrationFailed(ServiceError.rejected(.tooManyConnections(user: "alice", limit: 2)))
            == ["log too_many_connections", "error too_many_connections", "close 4003"])
        #expect(Self.registrationFailed(ServiceError.rejected(.unknownUser("alice"))).last == "close 4004")
        #expect(Self.registrationFailed(WireError.invalid("profile too large")).suffix(2) == ["error invalid_argument", "close 1008"])
        #expect(Self.registrationFailed(ServiceError.shuttingDown).suffix(2) == ["error shutting_down", "close 1011"])
    }

    @Test func aRefusedRegistrationStillGivesBackItsSlot() {
        var run = Transcript.Run()
        _ = run(.opened(.success(Transcript.identity())))
        _ = run(.slotAcquired)
        _ = run(.registrationFailed(ServiceError.shuttingDown))
        #expect(run(.disconnected(.internalError)) == ["ended - 1011", "release slot"])
    }

    @Test func aMessagePastAJSONLimitClosesWith1009() {
        var limits = GatewayLimits()
        limits.json.maxDepth = 2
        var run = Transcript.Run.ready(limits: limits)
        #expect(run(Transcript.text(#"{"a":{"b":{"c":{}}}}"#)) == ["log invalid_argument", "error invalid_argument", "close 1009"])
    }

    @Test func everyRefusalHasItsDocumentedCloseCode() {
        let codes: [(GatewayRefusal, Int)] = [
            (.authentication(.apiKey), 4001), (.authentication(.tokenExpired), 4002), (.tooManyConnections, 4003),
            (.unknownUser, 4004), (.profileRefused, 1008), (.unavailable, 1011), (.rateLimited, 4008),
            (.jsonTooLarge, 1009), (.slowConsumer, 4009), (.shuttingDown, 1001),
        ]
        for (refusal, code) in codes { #expect(Int(WebSocketCloseCode(refusal).rawValue) == code, "\(refusal)") }
    }
}

@Suite("Gateway session: events before the first health.check")
struct GatewaySessionEarlyEventTests {
    @Test func eventsFannedOutBeforeTheFirstHealthCheckAreHeldAndSentRightAfterIt() {
        var run = Transcript.Run()
        _ = run(.opened(.success(Transcript.identity())))
        _ = run(.slotAcquired)
        #expect(run(Transcript.live(1)) == [])
        #expect(run(.eventFannedOut(ByteBuffer(string: "user event"), cid: nil, channelSeq: nil)) == [])
        #expect(run(.registered(connectionID: "c1", healthCheck: Transcript.healthCheck())) == ["health.check ok", "live room 1", "user event"])
        #expect(run(Transcript.live(2)) == ["live room 2"])
    }
}

@Suite("Gateway session: the fan-out's per-recipient decision")
struct GatewaySessionFanOutDispositionTests {
    static let frame = ByteBuffer(string: "event")

    @Test func anEventIsSentOnceReadyHeldWhileRegisteringOrResumingAndDroppedOnceClosing() {
        var run = Transcript.Run()
        _ = run(.opened(.success(Transcript.identity())))
        #expect(run.session.eventFannedOut(Self.frame, cid: Transcript.room, channelSeq: 1) == .dropped)
        _ = run(.slotAcquired)
        #expect(run.session.eventFannedOut(Self.frame, cid: Transcript.room, channelSeq: 1) == .held)
        // The held frame goes out right after the first health.check, as the action list says.
        #expect(run(.registered(connectionID: "c1", healthCheck: Transcript.healthCheck())) == ["health.check ok", "event"])
        #expect(run.session.eventFannedOut(Self.frame, cid: Transcript.room, channelSeq: 2) == .send)
        _ = run(Transcript.text(#"{"type":"watch","cid":"messaging:hall","last_seq":1,"request_id":"w1"}"#))
        #expect(run.session.eventFannedOut(Self.frame, cid: Transcript.hall, channelSeq: 2) == .held)
        #expect(run.session.eventFannedOut(Self.frame, cid: Transcript.room, channelSeq: 3) == .send)
        _ = run(.closeRequested(.shuttingDown, reason: "bye"))
        #expect(run.session.eventFannedOut(Self.frame, cid: Transcript.room, channelSeq: 4) == .dropped)
    }
}

@Suite("Gateway session: resume")
struct GatewaySessionResumeTests {
    static func answer(_ resume: ChannelResume) -> GatewaySession.Input {
        .watchAnswered(resume.cid, lastSeq: resume.after, requestID: "w1",
                       .success(.init(state: Array("{}".utf8), counts: UnreadCounts(), resume: resume)), at: Transcript.at)
    }

    @Test func missedEventsComeFirstThenTheMarkerThenTheLiveEventsHeldMeanwhile() {
        var run = Transcript.Run.ready()
        #expect(run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":2,"request_id":"w1"}"#)) == ["watch messaging:room after 2 w1"])
        // Live events reach the connection while the journal is read: 5 is past the seam, 4 was replayed too.
        #expect(run(Transcript.live(4)) == [])
        #expect(run(Transcript.live(5)) == [])
        #expect(run(Transcript.live(1, Transcript.hall)) == ["live hall 1"])
        let resume = ChannelResume(cid: Transcript.room, after: 2, head: 4, outcome: .replayed([Transcript.journal(3), Transcript.journal(4)]))
        #expect(run(Self.answer(resume)) == [
            #"reply {"type":"reply","request_id":"w1","result":{}}"#,
            "replayed 3", "replayed 4", "count resumed 2", "marker resumed", "live room 5",
        ])
        #expect(run(Transcript.live(6)) == ["live room 6"])
    }

    @Test func heldEventsTheReplayLacksAreMergedInChannelOrderWithoutAGap() {
        var run = Transcript.Run.ready()
        _ = run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":1,"request_id":"w1"}"#))
        // 3 reached the connection live (the user's own notification): not in the replay, sent in its place.
        _ = run(Transcript.live(3))
        let resume = ChannelResume(cid: Transcript.room, after: 1, head: 4, outcome: .replayed([Transcript.journal(2), Transcript.journal(4)]))
        #expect(run(Self.answer(resume)).dropFirst() == ["replayed 2", "live room 3", "replayed 4", "count resumed 2", "marker resumed"])
    }

    @Test func aResumeNamedOnConnectHoldsItsChannelFromTheStart() {
        var run = Transcript.Run()
        _ = run(.opened(.success(Transcript.identity(resume: [(Transcript.room, 7)]))))
        _ = run(.slotAcquired)
        _ = run(Transcript.live(8))
        #expect(run(.registered(connectionID: "c1", healthCheck: Transcript.healthCheck())) == ["health.check ok", "watch messaging:room after 7 resume:messaging:room"])
        let resume = ChannelResume(cid: Transcript.room, after: 7, head: 7, outcome: .replayed([]))
        #expect(run(Self.answer(resume)).dropFirst() == ["count resumed 0", "marker resumed", "live room 8"])
    }

    @Test func anUnavailableResumeSaysSoAndReleasesTheHeldEvents() {
        var run = Transcript.Run.ready()
        _ = run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":1,"request_id":"w1"}"#))
        _ = run(Transcript.live(9))
        let resume = ChannelResume(cid: Transcript.room, after: 1, head: 9, outcome: .unavailable(reason: "pruned"))
        #expect(run(Self.answer(resume)).dropFirst() == ["count resume failed", "marker resume_failed", "live room 9"])
    }

    @Test func aSecondResumeOfTheSameChannelIsRefusedWhileTheFirstRuns() {
        var run = Transcript.Run.ready()
        _ = run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":1,"request_id":"w1"}"#))
        #expect(run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":1,"request_id":"w2"}"#)) == ["log invalid_argument", "error invalid_argument"])
    }

    @Test func theResumeBufferNeverSendsAnEventTwiceNorDropsOne() {
        var buffer = ResumeBuffer()
        buffer.beginResume(Transcript.room)
        for seq: Int64 in [3, 5, 6, 8] {
            let held = buffer.hold(ByteBuffer(string: "\(seq)"), cid: Transcript.room, channelSeq: seq, beforeFirstHealthCheck: false)
            #expect(held)
        }
        let out = buffer.finish(Transcript.room, replayedSeqs: [4, 5, 6], head: 6)
        #expect(out == [.held(ByteBuffer(string: "3")), .replayed(0), .replayed(1), .replayed(2), .marker, .held(ByteBuffer(string: "8"))])
        #expect(!buffer.isResuming(Transcript.room))
    }
}

@Suite("Gateway session: slow consumers")
struct GatewaySessionSlowConsumerTests {
    @Test func aConnectionUnwritableForTheGracePeriodIsClosedWith4009() {
        var run = Transcript.Run.ready(limits: GatewayLimits(slowConsumerGraceMilliseconds: 250))
        #expect(run(.writabilityChanged(isWritable: false)) == ["reading off", "timer 250 ms"])
        #expect(run(.slowConsumerTimerFired(bufferedBytes: 9_000_000)) == ["count slow consumer", "log slow_consumer", "close 4009"])
        #expect(run(Transcript.live(1)) == [])
        #expect(run.session.outboundQueued(buffered: 0, now: Transcript.t0) == [])
    }

    @Test func aConnectionWritableAgainBeforeTheGracePeriodStaysOpen() {
        var run = Transcript.Run.ready()
        _ = run(.writabilityChanged(isWritable: false))
        #expect(run(.writabilityChanged(isWritable: true)) == ["reading on", "cancel timer"])
        #expect(run(.slowConsumerTimerFired(bufferedBytes: 0)) == [])
    }

    @Test func anOutboundBufferOverTheLimitPastTheGracePeriodCloses() {
        var run = Transcript.Run.ready(limits: GatewayLimits(maxOutboundBufferBytes: 1000, slowConsumerGraceMilliseconds: 100))
        #expect(run.session.outboundQueued(buffered: 2000, now: Transcript.t0) == nil)
        #expect(run.session.outboundQueued(buffered: 2000, now: Transcript.t0 + .milliseconds(50)) == nil)
        let closed = run.session.outboundQueued(buffered: 2000, now: Transcript.t0 + .milliseconds(150))
        #expect(closed?.map(Transcript.render) == ["count slow consumer", "log slow_consumer", "close 4009"])
    }

    @Test func anOutboundBufferPastTheHardLimitClosesAtOnce() {
        var run = Transcript.Run.ready(limits: GatewayLimits(maxOutboundBufferBytes: 1000))
        let closed = run.session.outboundQueued(buffered: 1000 * GatewayLimits.hardOutboundLimitFactor + 1, now: Transcript.t0)
        #expect(closed?.last.map(Transcript.render) == "close 4009")
    }
}

@Suite("Gateway session: rate limit and flow control")
struct GatewaySessionRateLimitTests {
    @Test func commandsOverTheBurstAreRefusedThenASustainedFloodClosesWith4008() {
        var run = Transcript.Run.ready(limits: GatewayLimits(commandsPerSecond: 1, commandBurst: 2))
        let ping = #"{"type":"health.check"}"#
        #expect(run(Transcript.text(ping)) == ["read health.check c1"])
        #expect(run(Transcript.text(ping)) == ["read health.check c1"])
        #expect(run(Transcript.text(ping)) == ["log rate_limited", "error rate_limited"])
        #expect(run(Transcript.text(ping)) == ["log rate_limited", "error rate_limited"])
        #expect(run(Transcript.text(ping)) == ["log rate_limited", "error rate_limited", "close 4008"])
        #expect(run(Transcript.text(ping)) == [])
    }

    @Test func theRateRefillsWithTime() {
        var run = Transcript.Run.ready(limits: GatewayLimits(commandsPerSecond: 1, commandBurst: 1))
        let ping = #"{"type":"health.check"}"#
        #expect(run(Transcript.text(ping)) == ["read health.check c1"])
        #expect(run(Transcript.text(ping)) == ["log rate_limited", "error rate_limited"])
        #expect(run(Transcript.text(ping, at: Transcript.t0 + .seconds(2))) == ["read health.check c1"])
    }

    @Test func binaryMessagesAreCountedAndRefused() {
        var run = Transcript.Run.ready()
        #expect(run(.binaryReceived(now: Transcript.t0)) == ["log invalid_argument", "error invalid_argument"])
    }

    @Test func readingPausesWhileTooManyCommandsAwaitTheirAnswers() {
        var run = Transcript.Run.ready()
        let ping = #"{"type":"health.check"}"#
        for _ in 1 ..< GatewayLimits.maxCommandsInFlight { #expect(run(Transcript.text(ping)) == ["read health.check c1"]) }
        #expect(run(Transcript.text(ping)) == ["reading off", "read health.check c1"])
        #expect(run(.healthCheckAnswered(nil)) == ["reading on"])
    }

    @Test func aConnectionMayWatchNoMoreThanItsLimit() {
        var run = Transcript.Run.ready(limits: GatewayLimits(maxWatchedChannelsPerConnection: 1))
        #expect(run(Transcript.text(#"{"type":"watch","cid":"messaging:room"}"#)) == ["watch messaging:room after - -"])
        #expect(run(Transcript.text(#"{"type":"watch","cid":"messaging:hall","request_id":"w2"}"#)) == ["log too_many_watched_channels", "error too_many_watched_channels"])
    }
}
