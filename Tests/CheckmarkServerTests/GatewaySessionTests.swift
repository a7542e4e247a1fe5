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
        .eventFannedOut(ByteBuffer(string: "live \(cid.id) \(seq.map(String.init) ?? "-")"), cid: cid, channelSeq: seq, at: at)
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
        case .answerHealthCheck(let connectionID): return "answer health.check \(connectionID)"
        case .submit(let request, _, _): return "submit \(request.requestID ?? "-")"
        case .watch(let cid, let lastSeq, let requestID, _, _): return "watch \(cid) after \(lastSeq.map(String.init) ?? "-") \(requestID ?? "-")"
        case .readReplayPage(let resume, let expected): return "read page \(resume.cid) from \(expected)"
        case .continueReplay: return "continue replay"
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
        #expect(run(Transcript.text(#"{"type":"health.check"}"#)) == ["answer health.check c1"])
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
        #expect(run(.eventFannedOut(ByteBuffer(string: "user event"), cid: nil, channelSeq: nil, at: Transcript.at)) == [])
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
    static func answer(_ resume: ChannelResume, requestID: String = "w1") -> GatewaySession.Input {
        .watchAnswered(resume.cid, lastSeq: resume.after, requestID: requestID,
                       .success(.init(state: Array("{}".utf8), counts: UnreadCounts(), resume: resume)), at: Transcript.at)
    }

    static func plan(after: Int64, head: Int64, _ cid: ChannelCID = Transcript.room) -> ChannelResume {
        ChannelResume.plan(cid: cid, after: after, head: head, maxEvents: 10_000)
    }

    static func page(_ seqs: [Int64], through: Int64, _ cid: ChannelCID = Transcript.room) -> GatewaySession.Input {
        .replayPageRead(cid, .success(ChannelResume.Page(events: seqs.map { Transcript.journal($0, cid) }, through: through)), at: Transcript.at)
    }

    @Test func missedEventsComeFirstThenTheMarkerThenTheLiveEventsHeldMeanwhile() {
        var run = Transcript.Run.ready()
        #expect(run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":2,"request_id":"w1"}"#)) == ["watch messaging:room after 2 w1"])
        // Live events reach the connection while the journal is read: 5 is past the seam, 4 was replayed too.
        #expect(run(Transcript.live(4)) == [])
        #expect(run(Transcript.live(5)) == [])
        #expect(run(Transcript.live(1, Transcript.hall)) == ["live hall 1"])
        #expect(run(Self.answer(Self.plan(after: 2, head: 4))) == [#"reply {"type":"reply","request_id":"w1","result":{}}"#, "continue replay"])
        // The first page is read once the reply is queued.
        #expect(run(.replayContinued) == ["read page messaging:room from 3"])
        #expect(run(Self.page([3, 4], through: 4)) == [
            "replayed 3", "replayed 4", "count resumed 2", "marker resumed", "live room 5", "continue replay",
        ])
        #expect(run(.replayContinued) == [])
        #expect(run(Transcript.live(6)) == ["live room 6"])
    }

    @Test func heldEventsTheReplayLacksAreMergedInChannelOrderWithoutAGap() {
        var run = Transcript.Run.ready()
        _ = run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":1,"request_id":"w1"}"#))
        // 3 reached the connection live (the user's own notification): not in the replay, sent in its place.
        _ = run(Transcript.live(3))
        _ = run(Self.answer(Self.plan(after: 1, head: 4)))
        _ = run(.replayContinued)
        #expect(run(Self.page([2, 4], through: 4)) == ["replayed 2", "live room 3", "replayed 4", "count resumed 2", "marker resumed", "continue replay"])
    }

    @Test func theNextPageIsReadOnlyOnceTheSocketTookTheLastOne() {
        var run = Transcript.Run.ready()
        _ = run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":0,"request_id":"w1"}"#))
        _ = run(Transcript.live(601))
        #expect(run(Self.answer(Self.plan(after: 0, head: 600))).last == "continue replay")
        #expect(run(.replayContinued) == ["read page messaging:room from 1"])
        #expect(run(Self.page([1, 2], through: 2)) == ["replayed 1", "replayed 2", "continue replay"])
        // The socket holds what it was sent: nothing more is read until it drains.
        #expect(run(.writabilityChanged(isWritable: false)) == ["reading off", "timer 5000 ms"])
        #expect(run(.replayContinued) == [])
        #expect(run(.writabilityChanged(isWritable: true)) == ["reading on", "read page messaging:room from 3", "cancel timer"])
        // A page is read once: drained again while it is read, nothing more is asked.
        _ = run(.writabilityChanged(isWritable: false))
        #expect(run(.writabilityChanged(isWritable: true)) == ["reading on", "cancel timer"])
        #expect(run(Self.page([3, 600], through: 600)) == ["replayed 3", "replayed 600", "count resumed 4", "marker resumed", "live room 601", "continue replay"])
    }

    @Test func aConnectionThatNeverReadsIsClosedWith4009AndReadsNoMorePages() {
        var run = Transcript.Run.ready(limits: GatewayLimits(slowConsumerGraceMilliseconds: 250))
        _ = run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":0,"request_id":"w1"}"#))
        _ = run(Self.answer(Self.plan(after: 0, head: 10_000)))
        _ = run(.replayContinued)
        _ = run(Self.page([1], through: 256))
        _ = run(.writabilityChanged(isWritable: false))
        #expect(run(.slowConsumerTimerFired(bufferedBytes: 300_000)) == ["count slow consumer", "log slow_consumer", "close 4009"])
        #expect(run(.replayContinued) == [])
        #expect(run(.writabilityChanged(isWritable: true)) == [])
        #expect(run(Self.page([257], through: 512)) == [])
    }

    @Test func channelsAreReplayedOneAtATimeInTheOrderTheirWatchesWereAnswered() {
        var run = Transcript.Run.ready()
        _ = run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":0,"request_id":"w1"}"#))
        _ = run(Transcript.text(#"{"type":"watch","cid":"messaging:hall","last_seq":0,"request_id":"w1"}"#))
        _ = run(Self.answer(Self.plan(after: 0, head: 2)))
        #expect(run(.replayContinued) == ["read page messaging:room from 1"])
        _ = run(Self.answer(Self.plan(after: 0, head: 1, Transcript.hall)))
        #expect(run(.replayContinued) == [], "the room's page is being read: the hall waits its turn")
        #expect(run(Self.page([1, 2], through: 2)).last == "continue replay")
        #expect(run(.replayContinued) == ["read page messaging:hall from 1"])
        #expect(run(Self.page([1], through: 1, Transcript.hall)) == ["replayed 1", "count resumed 1", "marker resumed", "continue replay"])
    }

    @Test func aPageTheJournalCannotGiveEndsTheResumeWithTheReasonAndReleasesTheHeldEvents() {
        var run = Transcript.Run.ready()
        _ = run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":0,"request_id":"w1"}"#))
        _ = run(Transcript.live(700))
        _ = run(Self.answer(Self.plan(after: 0, head: 600)))
        _ = run(.replayContinued)
        _ = run(Self.page([1], through: 256))
        _ = run(.replayContinued)
        let pruned = GatewaySession.Input.replayPageRead(Transcript.room, .failure(.init(reason: "pruned")), at: Transcript.at)
        #expect(run(pruned) == ["count resume failed", "marker resume_failed", "live room 700", "continue replay"])
        #expect(run(Transcript.live(701)) == ["live room 701"])
    }

    @Test func liveEventsHeldPastTheOutboundLimitForAWatchNotAnsweredYetCloseWith4009() {
        var run = Transcript.Run.ready(limits: GatewayLimits(maxOutboundBufferBytes: 20))
        _ = run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":0,"request_id":"w1"}"#))
        #expect(run(Transcript.live(8)) == [], "11 bytes held")
        #expect(run(Transcript.live(9)) == ["count slow consumer", "log slow_consumer", "close 4009"])
        #expect(run(Self.answer(Self.plan(after: 0, head: 7))).contains("read page messaging:room from 1") == false)
    }

    @Test func aReplayOutlastedByItsChannelsLiveEventsEndsAsFailedAndTheHeldEventsGoOut() {
        var run = Transcript.Run.ready(limits: GatewayLimits(maxOutboundBufferBytes: 20))
        _ = run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":0,"request_id":"w1"}"#))
        _ = run(Self.answer(Self.plan(after: 0, head: 600)))
        #expect(run(.replayContinued) == ["read page messaging:room from 1"])
        #expect(run(Transcript.live(601)) == [])
        // The replay (its page still being read) ends; the connection stays open.
        #expect(run(Transcript.live(602)) == ["count resume failed", "marker resume_failed", "live room 601", "live room 602"])
        #expect(run(.heldPastLimit(at: Transcript.at)) == [], "ended once, not again")
        #expect(run(Self.page([1, 2], through: 256)) == ["continue replay"], "the abandoned replay's page is dropped")
        #expect(run(Transcript.live(603)) == ["live room 603"])
        // The channel may be resumed again.
        #expect(run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":603,"request_id":"w2"}"#)) == ["watch messaging:room after 603 w2"])
    }

    @Test func aResumeNamedOnConnectHoldsItsChannelFromTheStart() {
        var run = Transcript.Run()
        _ = run(.opened(.success(Transcript.identity(resume: [(Transcript.room, 7)]))))
        _ = run(.slotAcquired)
        _ = run(Transcript.live(8))
        #expect(run(.registered(connectionID: "c1", healthCheck: Transcript.healthCheck())) == ["health.check ok", "continue replay"])
        #expect(run(.replayContinued) == ["watch messaging:room after 7 resume:messaging:room"])
        #expect(run(Self.answer(Self.plan(after: 7, head: 7), requestID: "resume:messaging:room")).dropFirst() == ["count resumed 0", "marker resumed", "live room 8"])
    }

    @Test func channelsNamedOnConnectAreWatchedOneAtATimeEachOnceThePreviousReplayEnded() {
        var run = Transcript.Run()
        _ = run(.opened(.success(Transcript.identity(resume: [(Transcript.room, 0), (Transcript.hall, 3)]))))
        _ = run(.slotAcquired)
        #expect(run(.registered(connectionID: "c1", healthCheck: Transcript.healthCheck())) == ["health.check ok", "continue replay"])
        #expect(run(.replayContinued) == ["watch messaging:room after 0 resume:messaging:room"])
        _ = run(Transcript.live(9, Transcript.hall))
        let room = GatewaySession.Input.watchAnswered(Transcript.room, lastSeq: 0, requestID: "resume:messaging:room",
                                                      .success(.init(state: Array("{}".utf8), counts: UnreadCounts(), resume: Self.plan(after: 0, head: 2))),
                                                      at: Transcript.at)
        #expect(run(room).last == "continue replay")
        #expect(run(.replayContinued) == ["read page messaging:room from 1"], "the hall waits until the room's replay ended")
        #expect(run(Self.page([1, 2], through: 2)).suffix(3) == ["count resumed 2", "marker resumed", "continue replay"])
        // The socket holds what it was sent: the next watch waits until it drains.
        _ = run(.writabilityChanged(isWritable: false))
        #expect(run(.replayContinued) == [])
        #expect(run(.writabilityChanged(isWritable: true)) == ["reading on", "watch messaging:hall after 3 resume:messaging:hall", "cancel timer"])
        let hall = GatewaySession.Input.watchAnswered(Transcript.hall, lastSeq: 3, requestID: "resume:messaging:hall",
                                                      .success(.init(state: Array("{}".utf8), counts: UnreadCounts(), resume: Self.plan(after: 3, head: 3, Transcript.hall))),
                                                      at: Transcript.at)
        #expect(run(hall).dropFirst() == ["count resumed 0", "marker resumed", "live hall 9"])
    }

    @Test func aClientsOwnWatchCannotPassForAChannelNamedOnConnect() {
        var run = Transcript.Run()
        _ = run(.opened(.success(Transcript.identity(resume: [(Transcript.room, 0), (Transcript.hall, 0)]))))
        _ = run(.slotAcquired)
        _ = run(.registered(connectionID: "c1", healthCheck: Transcript.healthCheck()))
        #expect(run(.replayContinued) == ["watch messaging:room after 0 resume:messaging:room"])
        // The client watches the hall itself with the request_id a connect resume of it would have.
        let hall = GatewaySession.Input.watchAnswered(Transcript.hall, lastSeq: nil, requestID: "resume:messaging:hall",
                                                      .success(.init(state: Array("{}".utf8), counts: UnreadCounts(), resume: nil)),
                                                      at: Transcript.at)
        #expect(run(hall).contains("continue replay"))
        #expect(run(.replayContinued) == [], "the room's connect watch is still being answered")
    }

    @Test func aSlowConsumerGivesBackWhatWasHeldAtOnce() {
        var run = Transcript.Run.ready(limits: GatewayLimits(slowConsumerGraceMilliseconds: 250))
        _ = run(Transcript.text(#"{"type":"watch","cid":"messaging:room","last_seq":0,"request_id":"w1"}"#))
        _ = run(Transcript.live(8))
        _ = run(.writabilityChanged(isWritable: false))
        _ = run(.slowConsumerTimerFired(bufferedBytes: 300_000))
        #expect(run.session.eventFannedOut(ByteBuffer(string: "x"), cid: Transcript.room, channelSeq: 9) == .dropped)
        #expect(run(Self.answer(Self.plan(after: 0, head: 7))).contains("live room 8") == false)
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
        #expect(buffer.heldBytes == 4)
        #expect(buffer.page(Transcript.room, replayedSeqs: [4, 5], through: 5) == [.held(ByteBuffer(string: "3")), .replayed(0), .replayed(1)])
        #expect(buffer.heldBytes == 2, "3 sent, 5 replayed: 6 and 8 still held")
        #expect(buffer.page(Transcript.room, replayedSeqs: [6], through: 6) == [.replayed(0)])
        let end = buffer.finish(Transcript.room, head: 6)
        #expect(end.beforeMarker.isEmpty && end.afterMarker == [ByteBuffer(string: "8")])
        #expect(!buffer.isResuming(Transcript.room) && buffer.heldBytes == 0)
    }

    @Test func aCopyOfTheResumeBufferHoldsOnItsOwn() {
        var buffer = ResumeBuffer()
        buffer.beginResume(Transcript.room)
        _ = buffer.hold(ByteBuffer(string: "1"), cid: Transcript.room, channelSeq: 1, beforeFirstHealthCheck: false)
        var copy = buffer
        _ = copy.hold(ByteBuffer(string: "2"), cid: Transcript.room, channelSeq: 2, beforeFirstHealthCheck: false)
        #expect(buffer.heldBytes == 1 && copy.heldBytes == 2)
        #expect(buffer.release(Transcript.room) == [ByteBuffer(string: "1")])
        #expect(copy.release(Transcript.room) == [ByteBuffer(string: "1"), ByteBuffer(string: "2")])
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
        #expect(run(Transcript.text(ping)) == ["answer health.check c1"])
        #expect(run(Transcript.text(ping)) == ["answer health.check c1"])
        #expect(run(Transcript.text(ping)) == ["log rate_limited", "error rate_limited"])
        #expect(run(Transcript.text(ping)) == ["log rate_limited", "error rate_limited"])
        #expect(run(Transcript.text(ping)) == ["log rate_limited", "error rate_limited", "close 4008"])
        #expect(run(Transcript.text(ping)) == [])
    }

    @Test func theRateRefillsWithTime() {
        var run = Transcript.Run.ready(limits: GatewayLimits(commandsPerSecond: 1, commandBurst: 1))
        let ping = #"{"type":"health.check"}"#
        #expect(run(Transcript.text(ping)) == ["answer health.check c1"])
        #expect(run(Transcript.text(ping)) == ["log rate_limited", "error rate_limited"])
        #expect(run(Transcript.text(ping, at: Transcript.t0 + .seconds(2))) == ["answer health.check c1"])
    }

    @Test func binaryMessagesAreCountedAndRefused() {
        var run = Transcript.Run.ready()
        #expect(run(.binaryReceived(now: Transcript.t0)) == ["log invalid_argument", "error invalid_argument"])
    }

    @Test func readingPausesWhileTooManyCommandsAwaitTheirAnswers() {
        var run = Transcript.Run.ready()
        let mark = #"{"type":"mark_read","cid":"messaging:room","request_id":"r"}"#
        for _ in 1 ..< GatewayLimits.maxCommandsInFlight { #expect(run(Transcript.text(mark)) == ["submit r"]) }
        #expect(run(Transcript.text(mark)) == ["reading off", "submit r"])
        #expect(run(.commandAnswered(requestID: "r", .success(Array("{}".utf8)))) == [#"reply {"type":"reply","request_id":"r","result":{}}"#, "reading on"])
    }

    /// Stream's Android SDK takes a `health.check` with `me` for a new connection (and re-runs its
    /// connected handling): a keepalive is answered at once, without `me`, and does not wait in line.
    @Test func aKeepaliveIsAnsweredAtOnceWithoutWaitingForCommands() {
        var run = Transcript.Run.ready()
        #expect(run(Transcript.text(#"{"type":"mark_read","cid":"messaging:room","request_id":"r1"}"#)) == ["submit r1"])
        #expect(run(Transcript.text(#"[{"type":"health.check","client_id":"c1"}]"#)) == ["answer health.check c1"])
    }

    @Test func aConnectionMayWatchNoMoreThanItsLimit() {
        var run = Transcript.Run.ready(limits: GatewayLimits(maxWatchedChannelsPerConnection: 1))
        #expect(run(Transcript.text(#"{"type":"watch","cid":"messaging:room"}"#)) == ["watch messaging:room after - -"])
        #expect(run(Transcript.text(#"{"type":"watch","cid":"messaging:hall","request_id":"w2"}"#)) == ["log too_many_watched_channels", "error too_many_watched_channels"])
    }
}
