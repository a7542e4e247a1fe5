import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// Typing and custom events (``ChannelSignals``): who receives them, what privacy and the channel
/// type suppress, and the stop a closing connection owes. Transcripts: commands and signals in,
/// recipients out.
@Suite("Typing and custom events")
struct ChannelSignalsTests {
    static let general = Scenario.general

    /// a, b (two connections watching, one not) and c watch the general channel; d is not a member.
    static func scenario(bPrivacy: PrivacySettings = .init()) throws -> Scenario {
        var s = Scenario()
        try s.users("a", "c", "d")
        try s.users("b", privacy: bPrivacy)
        try s.channel(members: ["a", "b", "c"])
        try s.connect("a1", as: "a")
        try s.connect("b1", as: "b")
        try s.connect("b2", as: "b")
        try s.connect("b3", as: "b", watching: [])
        try s.connect("c1", as: "c")
        return s
    }

    static func decide(_ signals: inout ChannelSignals, _ s: inout Scenario, _ signal: ChannelSignal, from user: String,
                       connection: String? = nil) throws -> SignalDelivery {
        s.now += 1_000_000
        return try signals.decide(signal, from: user, in: general, connectionID: connection, engine: s.engine, at: Timestamp(rawValue: s.now))
    }

    @Test func typingReachesTheOtherWatchersNotTheSendersOwnConnections() throws {
        var s = try Self.scenario()
        var signals = ChannelSignals()
        let start = try Self.decide(&signals, &s, .typingStart(parentID: nil), from: "b", connection: "b1")
        #expect(start.recipients.map(\.connectionID) == ["a1", "c1"])
        #expect(start.suppressed == nil)
        let stop = try Self.decide(&signals, &s, .typingStop(parentID: nil), from: "b", connection: "b1")
        #expect(stop.recipients.map(\.connectionID) == ["a1", "c1"])
    }

    @Test func aCustomEventReachesEveryWatcherTheSendersIncluded() throws {
        var s = try Self.scenario()
        var signals = ChannelSignals()
        let event = try Self.decide(&signals, &s, .custom(type: "friendship_request", fields: .object([("text", .string("hi"))])), from: "b")
        #expect(event.recipients.map(\.connectionID) == ["a1", "b1", "b2", "c1"])
    }

    @Test func typingIndicatorsOffKeepsTheUsersTypingFromEveryone() throws {
        var s = try Self.scenario(bPrivacy: PrivacySettings(typingIndicators: false))
        var signals = ChannelSignals()
        let start = try Self.decide(&signals, &s, .typingStart(parentID: nil), from: "b", connection: "b1")
        #expect(start.recipients.isEmpty && start.suppressed == .senderPrivacy)
        let stop = try Self.decide(&signals, &s, .typingStop(parentID: nil), from: "b", connection: "b1")
        #expect(stop.recipients.isEmpty && stop.suppressed == .senderPrivacy)
        #expect(signals.typingCount == 0)
    }

    @Test func aPrivacyChangeTakesEffectForTheVeryNextTypingEvent() throws {
        var s = try Self.scenario()
        var signals = ChannelSignals()
        let off: JSONValue = .object([("privacy_settings", .object([("typing_indicators", .object([("enabled", .bool(false))]))]))])
        try s.run(.updateUser(UserPatch(id: "b", set: off.objectValue!, unset: [])))
        #expect(try Self.decide(&signals, &s, .typingStart(parentID: nil), from: "b").recipients.isEmpty)
        let on: JSONValue = .object([("privacy_settings", .object([("typing_indicators", .object([("enabled", .bool(true))]))]))])
        try s.run(.updateUser(UserPatch(id: "b", set: on.objectValue!, unset: [])))
        #expect(try Self.decide(&signals, &s, .typingStart(parentID: nil), from: "b").recipients.map(\.connectionID) == ["a1", "c1"])
    }

    @Test func typingEventsOffInTheChannelTypeKeepsTypingFromEveryone() throws {
        var s = try Self.scenario()
        var signals = ChannelSignals()
        try s.run(.updateChannelType(name: "messaging", readEvents: nil, deliveryEvents: nil, typingEvents: false))
        let start = try Self.decide(&signals, &s, .typingStart(parentID: nil), from: "a")
        #expect(start.recipients.isEmpty && start.suppressed == .channelType)
    }

    @Test func aStopEndsWhatWasShownEvenAfterThePrivacySettingTurnedOff() throws {
        var s = try Self.scenario()
        var signals = ChannelSignals()
        _ = try Self.decide(&signals, &s, .typingStart(parentID: nil), from: "b", connection: "b1")
        let off: JSONValue = .object([("privacy_settings", .object([("typing_indicators", .object([("enabled", .bool(false))]))]))])
        try s.run(.updateUser(UserPatch(id: "b", set: off.objectValue!, unset: [])))
        let stop = try Self.decide(&signals, &s, .typingStop(parentID: nil), from: "b", connection: "b1")
        #expect(stop.recipients.map(\.connectionID) == ["a1", "c1"], "the stop takes back what was shown")
        #expect(try Self.decide(&signals, &s, .typingStart(parentID: nil), from: "b").recipients.isEmpty)
    }

    @Test func customEventsOffInTheChannelTypeAreRefused() throws {
        var s = try Self.scenario()
        var signals = ChannelSignals()
        try s.run(.updateChannelType(name: "messaging", readEvents: nil, deliveryEvents: nil, customEvents: false))
        #expect(throws: ReceiptsError.notAllowed("custom events are off for channel type messaging (custom_events)")) {
            _ = try Self.decide(&signals, &s, .custom(type: "ping", fields: .object([])), from: "a")
        }
    }

    @Test func onlyMembersMaySendSignals() throws {
        var s = try Self.scenario()
        var signals = ChannelSignals()
        #expect(throws: ReceiptsError.notAMember(user: "d", cid: Self.general)) {
            _ = try Self.decide(&signals, &s, .typingStart(parentID: nil), from: "d")
        }
        #expect(throws: ReceiptsError.unknownUser("nobody")) {
            _ = try Self.decide(&signals, &s, .typingStart(parentID: nil), from: "nobody")
        }
    }

    @Test func aConnectionThatClosesWhileTypingSendsTheStop() throws {
        var s = try Self.scenario()
        var signals = ChannelSignals()
        _ = try Self.decide(&signals, &s, .typingStart(parentID: nil), from: "b", connection: "b1")
        _ = try Self.decide(&signals, &s, .typingStart(parentID: "m1"), from: "b", connection: "b1")
        try s.run(.disconnect(connectionID: "b1"))
        let stops = signals.connectionClosed("b1", engine: s.engine, at: Timestamp(rawValue: s.now))
        #expect(stops.map(\.signal) == [.typingStop(parentID: nil), .typingStop(parentID: "m1")])
        #expect(stops.allSatisfy { $0.recipients.map(\.connectionID) == ["a1", "c1"] })
        #expect(signals.typingCount == 0)
        #expect(signals.connectionClosed("b1", engine: s.engine, at: Timestamp(rawValue: s.now)).isEmpty, "owed once")
    }

    @Test func aClosingConnectionOwesNoStopWhileAnotherOfTheUsersConnectionsTypesThere() throws {
        var s = try Self.scenario()
        var signals = ChannelSignals()
        _ = try Self.decide(&signals, &s, .typingStart(parentID: nil), from: "b", connection: "b1")
        _ = try Self.decide(&signals, &s, .typingStart(parentID: nil), from: "b", connection: "b2")
        try s.run(.disconnect(connectionID: "b1"))
        #expect(signals.connectionClosed("b1", engine: s.engine, at: Timestamp(rawValue: s.now)).isEmpty)
        try s.run(.disconnect(connectionID: "b2"))
        #expect(signals.connectionClosed("b2", engine: s.engine, at: Timestamp(rawValue: s.now)).map(\.signal) == [.typingStop(parentID: nil)])
    }

    @Test func aStoppedOrForgottenTypingOwesNothingAtClose() throws {
        var s = try Self.scenario()
        var signals = ChannelSignals()
        signals.typingMemory = 5_000_000
        _ = try Self.decide(&signals, &s, .typingStart(parentID: nil), from: "b", connection: "b1")
        _ = try Self.decide(&signals, &s, .typingStop(parentID: nil), from: "b", connection: "b1")
        _ = try Self.decide(&signals, &s, .typingStart(parentID: "m1"), from: "b", connection: "b1")
        s.now += 10_000_000  // past the memory: Stream's clients stopped showing it after 7 s
        try s.run(.disconnect(connectionID: "b1"))
        #expect(signals.connectionClosed("b1", engine: s.engine, at: Timestamp(rawValue: s.now)).isEmpty)
        #expect(signals.typingCount == 0)
    }

    /// A sender that starts typing in ever new threads (a hostile client, or a server token without a
    /// rate limit): what is remembered stays within the starts of one ``ChannelSignals/typingMemory``.
    @Test func aFloodOfStartsIsRememberedForOneMemoryOnly() throws {
        var s = try Self.scenario()
        var signals = ChannelSignals()
        signals.typingMemory = 1_000_000
        var most = 0
        for index in 0..<20_000 {
            s.now += 1_000  // a start a millisecond, 20 s in all
            _ = try signals.decide(.typingStart(parentID: "p\(index)"), from: "b", in: Self.general, connectionID: "b1",
                                   engine: s.engine, at: Timestamp(rawValue: s.now))
            most = max(most, signals.typingCount)
        }
        #expect(most <= 1_001, "at most one memory's worth of starts: \(most)")
        try s.run(.disconnect(connectionID: "b1"))
        #expect(signals.connectionClosed("b1", engine: s.engine, at: Timestamp(rawValue: s.now)).count <= 1_001)
    }

    @Test func aRepeatedStartIsRememberedFromItsLatestTime() throws {
        var s = try Self.scenario()
        var signals = ChannelSignals()
        signals.typingMemory = 5_000_000
        for _ in 0..<10 { _ = try Self.decide(&signals, &s, .typingStart(parentID: nil), from: "b", connection: "b1") }
        s.now += 3_000_000
        try s.run(.disconnect(connectionID: "b1"))
        #expect(signals.connectionClosed("b1", engine: s.engine, at: Timestamp(rawValue: s.now)).count == 1)
    }

    @Test func reservedTypesAreStreamsOwnNamespaces() {
        for type in ["message.new", "health.check", "connection.changed", "typing.start", "reaction.new", "user.watching.start", "channel.whatever",
                     "reply", "error"] {
            #expect(ChannelSignal.isReservedType(type), "\(type)")
        }
        for type in ["friendship_request", "ai_indicator.update", "app_specific.ping", "healthcheck"] {
            #expect(!ChannelSignal.isReservedType(type), "\(type)")
        }
    }

    /// The privacy oracle: random users toggling `typing_indicators`, the channel type toggling
    /// `typing_events`, random typing, watches and disconnects. Every start reaches exactly the other
    /// watchers when both settings are on and nobody otherwise; every stop reaches them when it ends a
    /// start they were shown or when both are on; every close owes exactly the starts still shown.
    @Test(arguments: 0..<40)
    func typingFollowsThePrivacyOracle(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var s = Scenario()
        let users = ["u0", "u1", "u2", "u3"]
        for user in users { try s.users(user) }
        try s.channel(members: users)
        var open: [String: String] = [:]  // connection to user
        var next = 0
        var shownBy: [String: Set<String>] = [:]  // user shown typing: the connections that started it
        var signals = ChannelSignals()
        signals.typingMemory = 1_000_000_000_000  // the oracle does not model forgetting
        var typingEvents = true
        for _ in 0..<300 {
            let user = users[Int(rng.next() % 4)]
            switch rng.next() % 8 {
            case 0:
                let enabled = rng.next() % 2 == 0
                let set: JSONValue = .object([("privacy_settings", .object([("typing_indicators", .object([("enabled", .bool(enabled))]))]))])
                try s.run(.updateUser(UserPatch(id: user, set: set.objectValue!, unset: [])))
            case 1:
                typingEvents = rng.next() % 3 != 0
                try s.run(.updateChannelType(name: "messaging", readEvents: nil, deliveryEvents: nil, typingEvents: typingEvents))
            case 2:
                let id = "c\(next)"
                next += 1
                try s.connect(id, as: user, watching: rng.next() % 4 == 0 ? [] : [Scenario.general])
                open[id] = user
            case 3:
                let candidates = open.sorted(by: { $0.key < $1.key })
                guard !candidates.isEmpty else { continue }
                let (id, owner) = candidates[Int(rng.next() % UInt64(candidates.count))]
                try s.run(.disconnect(connectionID: id))
                open[id] = nil
                let stops = signals.connectionClosed(id, engine: s.engine, at: Timestamp(rawValue: s.now))
                let owed = shownBy[owner]?.contains(id) == true && shownBy[owner]!.count == 1
                shownBy[owner]?.remove(id)
                if shownBy[owner]?.isEmpty == true { shownBy[owner] = nil }
                #expect(stops.count == (owed ? 1 : 0), "seed \(seed): close of \(id)")
                for stop in stops { #expect(Set(stop.recipients.map(\.userID)) == watchers(s, except: owner)) }
            default:
                let starting = rng.next() % 3 != 0
                let connection = open.filter { $0.value == user }.keys.sorted().first
                let delivery = try Self.decide(&signals, &s, starting ? .typingStart(parentID: nil) : .typingStop(parentID: nil),
                                               from: user, connection: connection)
                let allowed = s.engine.users[user]!.privacy.typingIndicators && typingEvents
                let expected: Set<String>
                if starting {
                    expected = allowed ? watchers(s, except: user) : []
                    if allowed { shownBy[user, default: []].insert(connection ?? "") }
                } else {
                    expected = allowed || shownBy[user] != nil ? watchers(s, except: user) : []
                    shownBy[user] = nil
                }
                #expect(Set(delivery.recipients.map(\.userID)) == expected, "seed \(seed): \(starting ? "start" : "stop") of \(user)")
                #expect(delivery.recipients.allSatisfy { $0.userID != user }, "never to the sender's own connections")
            }
        }

        func watchers(_ s: Scenario, except user: String) -> Set<String> {
            Set(s.engine.channels[Scenario.general]!.watchers.map(\.userID).filter { $0 != user })
        }
    }
}
