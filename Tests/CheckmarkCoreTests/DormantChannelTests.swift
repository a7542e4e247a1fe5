import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// Issue 44: a channel can stay in storage until first needed (``DormantChannel``). While dormant it
/// still counts in its members' totals and memberships; a command that needs it is answered with
/// `channelsNotLoaded` before anything changes, and once the channel is installed the command has
/// exactly the outcome it has on an engine that held the channel all along.
@Suite("Dormant channels")
struct DormantChannelTests {
    static let general = Scenario.general
    static let team = ChannelCID(type: "messaging", id: "team")

    /// Two channels with messages, a thread with unread replies, and members at different places.
    static func history() throws -> Scenario {
        var s = Scenario()
        try s.users("a", "b", "c")
        try s.channel(members: ["a", "b", "c"])
        try s.channel(team, members: ["a", "b"])
        for n in 0..<5 { try s.send("a", "g\(n)") }
        try s.run(.sendMessage(cid: general, userID: "b", draft: MessageDraft(id: "r1", text: "reply", parentID: "g0")))
        try s.run(.sendMessage(cid: general, userID: "c", draft: MessageDraft(id: "s1", text: "quiet", silent: true)))
        try s.run(.markRead(cid: general, userID: "b", messageID: "g2"))
        try s.run(.sendMessage(cid: team, userID: "b", draft: MessageDraft(id: "t1", text: "team")))
        try s.run(.markRead(cid: team, userID: "a", messageID: nil))
        return s
    }

    /// The snapshot with `dormant` channels left in storage, and those channels as storage would load them.
    static func dormant(_ cids: [ChannelCID], of engine: ReceiptsEngine) -> (snapshot: ReceiptsSnapshot, stored: [ChannelCID: Channel]) {
        var snapshot = engine.snapshot()
        var stored: [ChannelCID: Channel] = [:]
        for channel in snapshot.channels where cids.contains(channel.cid) {
            stored[channel.cid] = channel
            snapshot.dormantChannels.append(DormantChannel(of: channel))
        }
        snapshot.channels.removeAll { cids.contains($0.cid) }
        return (snapshot, stored)
    }

    /// Applies `command` as the service does: when channels are dormant, installs them from `stored`
    /// and applies it again.
    static func applyLoading(_ command: ReceiptsCommand, to engine: inout ReceiptsEngine, at time: Timestamp,
                             stored: [ChannelCID: Channel]) -> (Result<ReceiptsOutcome, ReceiptsError>, loaded: [ChannelCID]) {
        let first = engine.apply(command, at: time)
        guard case .failure(.channelsNotLoaded(let cids)) = first else { return (first, []) }
        for cid in cids {
            let installed = engine.install(stored[cid]!)
            #expect(installed)
        }
        return (engine.apply(command, at: time), cids)
    }

    @Test func aDormantChannelCountsInItsMembersTotalsAndMemberships() throws {
        let s = try Self.history()
        let full = ReceiptsEngine(restoring: s.engine.snapshot())
        let lazy = ReceiptsEngine(restoring: Self.dormant([Self.general, Self.team], of: s.engine).snapshot)
        #expect(lazy.channels.isEmpty && lazy.dormantChannels.count == 2)
        #expect(lazy.totals == full.totals && lazy.totals == s.engine.totals)
        #expect(lazy.counts(for: "a").unreadThreads == 1, "a wrote g0 and has b's reply unread")
        #expect(lazy.membership == full.membership)
        #expect(ReceiptsEngine(restoring: lazy.snapshot()).dormantChannels == lazy.dormantChannels, "a snapshot keeps them dormant")
    }

    @Test func aCommandOnADormantChannelChangesNothingUntilTheChannelIsInstalled() throws {
        let s = try Self.history()
        var lazy = ReceiptsEngine(restoring: Self.dormant([Self.general], of: s.engine).snapshot)
        let before = lazy.snapshot()
        let send = ReceiptsCommand.sendMessage(cid: Self.general, userID: "c", draft: MessageDraft(id: "new", text: "hi"))
        #expect(lazy.apply(send, at: Timestamp(rawValue: 1_900_000_000_000_000)) == .failure(.channelsNotLoaded([Self.general])))
        let footprint = lazy.takeFootprint()
        #expect(lazy.snapshot().clock == before.clock && footprint.isEmpty)
        #expect(try lazy.channelsToLoad(for: .markRead(cid: Self.team, userID: "a", messageID: nil)).isEmpty, "team is in memory")
        #expect(try lazy.channelsToLoad(for: .connect(connectionID: "k", userID: "a")).isEmpty)
        let installed = lazy.install(s.engine.channels[Self.team]!)
        #expect(!installed, "not dormant: nothing to install")
    }

    @Test func markAllReadNeedsOnlyTheDormantChannelsWhereThePointerWouldMove() throws {
        let s = try Self.history()
        let lazy = ReceiptsEngine(restoring: Self.dormant([Self.general, Self.team], of: s.engine).snapshot)
        #expect(try lazy.channelsToLoad(for: .markReadMany(userID: "a", channels: nil)) == [Self.general], "a read team to its end")
        #expect(try lazy.channelsToLoad(for: .markReadMany(userID: "b", channels: nil)) == [Self.general], "b's own message ended team")
        #expect(try lazy.channelsToLoad(for: .markDelivered(userID: "a", latest: [DeliveredTarget(cid: Self.team, messageID: "t1")])) == [Self.team])
        #expect(try lazy.channelsToLoad(for: .stopWatching(connectionID: "k", cid: Self.team)).isEmpty, "nobody watches a dormant channel")
    }

    /// A hostile or mistaken client cannot make the server load channels it may not touch: a command
    /// by a non-member (or an unknown user or connection) is refused as the command itself refuses
    /// it, and the channel stays in storage.
    @Test func aCommandByANonMemberIsRefusedWithoutLoadingTheChannel() throws {
        let s = try Self.history()
        var full = ReceiptsEngine(restoring: s.engine.snapshot())
        var lazy = ReceiptsEngine(restoring: Self.dormant([Self.team], of: s.engine).snapshot)
        let time = Timestamp(rawValue: 1_900_000_000_000_000)
        _ = full.apply(.connect(connectionID: "kc", userID: "c"), at: time)
        _ = lazy.apply(.connect(connectionID: "kc", userID: "c"), at: time)
        for command: ReceiptsCommand in [
            .sendMessage(cid: Self.team, userID: "c", draft: MessageDraft(id: "x", text: "let me in")),
            .markRead(cid: Self.team, userID: "c", messageID: nil),
            .markUnread(cid: Self.team, userID: "c", from: .message("t1")),
            .markThreadRead(cid: Self.team, userID: "c", parentID: "t1"),
            .markDelivered(userID: "c", latest: [DeliveredTarget(cid: Self.team, messageID: "t1")]),
            .markReadMany(userID: "c", channels: [ChannelReadTarget(cid: Self.team, messageID: nil)]),
            .watch(connectionID: "kc", cid: Self.team),
            .watch(connectionID: "nobody", cid: Self.team),
            .sendMessage(cid: Self.team, userID: "stranger", draft: MessageDraft(id: "y", text: "hi")),
        ] {
            let expected = full.apply(command, at: time)
            guard case .failure = expected else { Issue.record("\(command) is not refused"); continue }
            #expect(lazy.apply(command, at: time) == expected, "\(command)")
        }
        #expect(lazy.dormantChannels.keys.contains(Self.team) && lazy.channels[Self.team] == nil)
    }

    /// Commands of every kind, on an engine holding every channel and on one holding none (installing
    /// them as commands ask): the same outcome at every step, and the same state at the end.
    @Test func onceInstalledEveryCommandHasTheOutcomeItHasOnAResidentChannel() throws {
        let s = try Self.history()
        var full = ReceiptsEngine(restoring: s.engine.snapshot())
        let (snapshot, stored) = Self.dormant([Self.general, Self.team], of: s.engine)
        var lazy = ReceiptsEngine(restoring: snapshot)
        let commands: [ReceiptsCommand] = [
            .connect(connectionID: "kc", userID: "c"),  // not watching: told of new messages by notification
            .connect(connectionID: "wb", userID: "b"),
            .connect(connectionID: "wa", userID: "a"),
            // Regression: mark all read with a dormant channel read to its end (team, for a) left dormant.
            .markReadMany(userID: "a", channels: nil),
            .stopWatching(connectionID: "wa", cid: Self.team),
            .watch(connectionID: "wb", cid: Self.general),
            .sendMessage(cid: Self.general, userID: "a", draft: MessageDraft(id: "g5", text: "more")),
            .markReadMany(userID: "c", channels: nil),
            .markThreadRead(cid: Self.general, userID: "a", parentID: "g0"),
            .markUnread(cid: Self.general, userID: "b", from: .message("g4")),
            .markDelivered(userID: "b", latest: [DeliveredTarget(cid: Self.team, messageID: "t1")]),
            .sendMessage(cid: Self.team, userID: "a", draft: MessageDraft(id: "t2", text: "team again")),
            .addMembers(cid: Self.team, userIDs: ["c"]),
            .removeMembers(cid: Self.general, userIDs: ["b"]),
            .disconnect(connectionID: "kc"),
        ]
        var now: Int64 = 1_900_000_000_000_000
        var loaded: [ChannelCID] = []
        for command in commands {
            now += 1_000_000
            let time = Timestamp(rawValue: now)
            let (lazyResult, installed) = Self.applyLoading(command, to: &lazy, at: time, stored: stored)
            loaded += installed
            #expect(lazyResult == full.apply(command, at: time), "\(command)")
            #expect(lazy.totals == full.totals, "\(command)")
        }
        #expect(loaded == [Self.general, Self.team])
        #expect(lazy.dormantChannels.isEmpty)
        for (cid, channel) in full.channels {
            let installed = try #require(lazy.channels[cid])
            #expect(installed.members == channel.members && installed.memberOrder == channel.memberOrder)
            #expect(installed.memberConnections == channel.memberConnections && installed.watchers == channel.watchers)
            #expect(installed.messages.heldMessages == channel.messages.heldMessages && installed.threads == channel.threads)
        }
        #expect(lazy.membership == full.membership)
    }
}
