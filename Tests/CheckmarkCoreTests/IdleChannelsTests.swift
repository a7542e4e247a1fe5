import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// Issue 44: memory follows activity. A loaded channel goes back to storage once it has had no watcher
/// and no change for the idle time (``IdleChannels`` decides, ``ReceiptsEngine/evict(_:)`` performs),
/// and the engine then answers exactly as it did with the channel resident, loading it again on first use.
@Suite("Idle channels go back to storage")
struct IdleChannelsTests {
    static let general = Scenario.general
    static let team = DormantChannelTests.team

    static func resident(_ cid: ChannelCID, activity: Int64, busy: Bool = false) -> IdleChannels.Resident {
        IdleChannels.Resident(cid: cid, activity: activity, busy: busy)
    }

    // MARK: The sweep's decisions, as a transcript

    @Test func aChannelIsIdleOnceNeitherActivityNorBusinessWasSeenForTheIdleTime() {
        var idle = IdleChannels(idleAfter: 1_000)
        idle.loaded(Self.general, activity: 5, at: 0)
        #expect(idle.sweep([Self.resident(Self.general, activity: 5)], at: 999) == [])
        #expect(idle.sweep([Self.resident(Self.general, activity: 5)], at: 1_000) == [Self.general])
        #expect(idle.trackedCount == 0, "an idle channel is the caller's to evict, and forgotten here")
    }

    @Test func activityOrBusinessSeenByASweepStartsTheIdleTimeAgain() {
        var idle = IdleChannels(idleAfter: 1_000)
        idle.loaded(Self.general, activity: 5, at: 0)
        idle.loaded(Self.team, activity: 1, at: 0)
        // general changed (a message, a read), team is watched or has a commit pending.
        #expect(idle.sweep([Self.resident(Self.general, activity: 6), Self.resident(Self.team, activity: 1, busy: true)], at: 900) == [])
        #expect(idle.sweep([Self.resident(Self.general, activity: 6), Self.resident(Self.team, activity: 1)], at: 1_899) == [])
        #expect(Set(idle.sweep([Self.resident(Self.general, activity: 6), Self.resident(Self.team, activity: 1)], at: 1_900))
            == [Self.general, Self.team])
    }

    @Test func aChannelFirstSeenByASweepIsActiveAsOfThatSweep() {
        // A channel created on this node, never loaded.
        var idle = IdleChannels(idleAfter: 1_000)
        #expect(idle.sweep([Self.resident(Self.general, activity: 0)], at: 5_000) == [])
        #expect(idle.sweep([Self.resident(Self.general, activity: 0)], at: 6_000) == [Self.general])
    }

    @Test func aChannelNoLongerResidentIsForgotten() {
        var idle = IdleChannels(idleAfter: 1_000)
        idle.loaded(Self.general, activity: 0, at: 0)
        idle.loaded(Self.team, activity: 0, at: 0)
        #expect(idle.sweep([Self.resident(Self.team, activity: 0)], at: 10) == [])
        #expect(idle.trackedCount == 1)
        // Loaded again later: its idle time counts from the new load, not the old one.
        idle.loaded(Self.general, activity: 0, at: 2_000)
        #expect(idle.sweep([Self.resident(Self.general, activity: 0), Self.resident(Self.team, activity: 0)], at: 2_500) == [Self.team])
    }

    // MARK: Eviction in the engine

    /// The history of ``DormantChannelTests/history()`` with every message durable and the rows of the
    /// last command handed over: as a single node's engine is between commits.
    static func settled() throws -> Scenario {
        var s = try DormantChannelTests.history()
        s.engine.markAllMessagesDurable()
        _ = s.engine.takeFootprint()
        return s
    }

    @Test func anEvictedChannelIsDormantAsRestartingWouldLeaveIt() throws {
        var s = try Self.settled()
        let before = s.engine
        let restarted = ReceiptsEngine(restoring: DormantChannelTests.dormant([Self.general], of: before).snapshot)
        let evicted1 = s.engine.evict(Self.general)
        #expect(evicted1)
        #expect(s.engine.channels[Self.general] == nil)
        #expect(s.engine.dormantChannels == restarted.dormantChannels)
        // The totals and memberships a restart computes afresh from the dormant channel, and those
        // of the engine that held it.
        #expect(s.engine.totals == restarted.totals && restarted.totals == before.totals)
        #expect(s.engine.membership == restarted.membership)
        for user in ["a", "b", "c"] { #expect(s.engine.counts(for: user) == restarted.counts(for: user), "\(user)") }
    }

    @Test func aWatchedChannelStays() throws {
        var s = try Self.settled()
        try s.connect("ca", as: "a", watching: [Self.general])
        let evicted2 = s.engine.evict(Self.general)
        #expect(!evicted2)
        try s.run(.stopWatching(connectionID: "ca", cid: Self.general))
        let evicted3 = s.engine.evict(Self.general)
        #expect(evicted3)
    }

    @Test func aChannelWithAMessageNotDurableYetStays() throws {
        var s = try Self.settled()
        try s.send("a", "late")
        _ = s.engine.takeFootprint()
        let evicted4 = s.engine.evict(Self.general)
        #expect(!evicted4, "its text is held only in memory until storage confirms it")
        s.engine.markAllMessagesDurable()
        let evicted5 = s.engine.evict(Self.general)
        #expect(evicted5)
    }

    /// Issue 46: an edited text is held in memory until storage confirms the row that stores it; a
    /// channel whose edit waits for that stays, even once its rows were handed over.
    @Test func aChannelWithAnEditNotDurableYetStays() throws {
        var s = try Self.settled()
        try s.run(.updateMessage(cid: Self.general, messageID: "g1", text: "edited", by: "a"))
        _ = s.engine.takeFootprint()
        let log = s.engine.channels[Self.general]!.messages
        let edit = try #require(log.pendingEdit(at: log.position(of: "g1")!))
        let evicted8 = s.engine.evict(Self.general)
        #expect(!evicted8, "its edited text is only in memory")
        s.engine.markEditsDurable([Self.general: [log.position(of: "g1")!: edit]])
        let evicted9 = s.engine.evict(Self.general)
        #expect(evicted9)
    }

    @Test func aChannelWithRowsNotHandedOverStays() throws {
        var s = try Self.settled()
        try s.run(.markUnread(cid: Self.team, userID: "a", from: .message("t1")))
        let evicted6 = s.engine.evict(Self.team)
        #expect(!evicted6)
        _ = s.engine.takeFootprint()
        let evicted7 = s.engine.evict(Self.team)
        #expect(evicted7)
        let evicted8 = s.engine.evict(Self.team)
        #expect(!evicted8, "already dormant")
    }

    @Test func afterEvictionAndALoadEveryCommandHasTheOutcomeOfAChannelNeverEvicted() throws {
        let s = try Self.settled()
        var kept = s.engine
        var evicted = s.engine
        let stored = [Self.general: s.engine.channels[Self.general]!, Self.team: s.engine.channels[Self.team]!]
        let both = evicted.evict(Self.general) && evicted.evict(Self.team)
        #expect(both)
        let commands: [ReceiptsCommand] = [
            .connect(connectionID: "wb", userID: "b"),
            .markReadMany(userID: "c", channels: nil),
            .watch(connectionID: "wb", cid: Self.general),
            .sendMessage(cid: Self.general, userID: "a", draft: MessageDraft(id: "g5", text: "more")),
            .markThreadRead(cid: Self.general, userID: "a", parentID: "g0"),
            .markDelivered(userID: "b", latest: [DeliveredTarget(cid: Self.team, messageID: "t1")]),
            .markUnread(cid: Self.team, userID: "a", from: .message("t1")),
        ]
        var now: Int64 = 1_900_000_000_000_000
        for command in commands {
            now += 1_000_000
            let time = Timestamp(rawValue: now)
            let (result, _) = DormantChannelTests.applyLoading(command, to: &evicted, at: time, stored: stored)
            #expect(result == kept.apply(command, at: time), "\(command)")
            #expect(evicted.totals == kept.totals, "\(command)")
        }
        #expect(evicted.dormantChannels.isEmpty)
        for (cid, channel) in kept.channels {
            let loaded = try #require(evicted.channels[cid])
            #expect(loaded.members == channel.members && loaded.memberOrder == channel.memberOrder && loaded.threads == channel.threads)
            #expect(loaded.memberConnections == channel.memberConnections && loaded.watchers == channel.watchers)
        }
    }
}
