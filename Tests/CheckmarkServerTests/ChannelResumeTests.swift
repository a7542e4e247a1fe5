import CheckmarkCore
import CheckmarkServer
import CheckmarkStorage
import Testing

/// What a resume replays, decided from journal rows alone (docs/protocol.md, Resuming a channel).
@Suite("Resume: which missed events a watcher gets")
struct ChannelResumeTests {
    static let general = ChannelCID(type: "messaging", id: "general")

    /// Channel event `seq`, made by entry `seq + 100` of the channel's shard's stream (or `entry`).
    static func row(_ seq: Int64, _ type: String = "message.new", _ audience: EventAudience? = .watchers,
                    entry: StreamPosition?? = nil) -> JournalEvent {
        JournalEvent(seq: seq + 100, cid: general, channelSeq: seq, type: type, audience: audience, json: Array("{}".utf8),
                     entry: entry ?? StreamPosition(stream: JournalStream(ShardMap.shard(of: general)), number: seq + 100))
    }

    /// A cluster node's opening, with the channel's shard's stream at `shard` and the cluster stream at `cluster`.
    static func opened(shard: Int64, cluster: Int64 = 0) -> ConnectionOpening {
        var positions = Array(repeating: Int64(0), count: JournalStream.count)
        positions[ShardMap.shard(of: general).rawValue] = shard
        positions[JournalStream.cluster.rawValue] = cluster
        return .afterStreams(positions)
    }

    /// The sequences one page replays, or nil when the journal cannot give it.
    static func replayed(_ page: Result<ChannelResume.Page, ChannelResume.UnavailableReplay>) -> [Int64]? {
        guard case .success(let page) = page else { return nil }
        return page.events.compactMap(\.channelSeq)
    }

    static func reason(_ page: Result<ChannelResume.Page, ChannelResume.UnavailableReplay>) -> String? {
        guard case .failure(let unavailable) = page else { return nil }
        return unavailable.reason
    }

    @Test(arguments: [
        // (after, head, maxEvents, replays, reason contains)
        (Int64(-1), Int64(5), 100, false, "negative"),
        (7, 5, 100, false, "no event 7"),
        (0, 200, 100, false, "more than the 100"),
        (5, 5, 100, true, ""),
        (2, 5, 100, true, ""),
    ])
    func planDecidesWithoutTheJournalWhereItCan(after: Int64, head: Int64, max: Int, replays: Bool, reason: String) {
        let plan = ChannelResume.plan(cid: Self.general, after: after, head: head, maxEvents: max, openedAt: Self.opened(shard: 42))
        switch plan.outcome {
        case .replay(let openedAt):
            #expect(replays && openedAt == Self.opened(shard: 42))
        case .unavailable(let text):
            #expect(!replays && text.contains(reason), "\(text)")
        }
    }

    @Test func watcherGetsEveryEventMeantForWatchersAndOnlyItsOwnPrivateOnes() {
        let rows = [
            Self.row(3), Self.row(4, "message.read", .userWatching("carol")), Self.row(5, "notification.mark_read", .user("bob")),
            Self.row(6, "notification.message_new", .nonWatchingMembers), Self.row(7, "message.read"),
        ]
        let bob = ChannelResume.page(cid: Self.general, userID: "bob", expected: 3, head: 7, rows: rows)
        #expect(Self.replayed(bob) == [3, 5, 7], "carol's private read and the non-watcher notification are not bob's")
        let carol = ChannelResume.page(cid: Self.general, userID: "carol", expected: 3, head: 7, rows: rows)
        #expect(Self.replayed(carol) == [3, 4, 7])
    }

    @Test func aPageCoversTheRowsReadAndTheNextStartsAfterThem() throws {
        let first = ChannelResume.page(cid: Self.general, userID: "bob", expected: 3, head: 9,
                                       rows: [Self.row(3), Self.row(4, "message.read", .userWatching("carol"))])
        #expect(try first.get().through == 4, "carol's read is not bob's, but the page covered it")
        let second = ChannelResume.page(cid: Self.general, userID: "bob", expected: 5, head: 9, rows: [Self.row(5)])
        #expect(Self.replayed(second) == [5])
    }

    @Test func ownNotificationsEmittedWhileTheConnectionWasOpenAreNotReplayedAgain() {
        // Rows' entries are numbered channel seq + 100 in the shard's stream; the connection opened
        // after entry 104.
        let rows = [Self.row(3, "notification.mark_read", .user("bob")), Self.row(5, "notification.mark_read", .user("bob")),
                    Self.row(6, "message.read", .userWatching("bob")), Self.row(4)]
            .sorted { $0.seq < $1.seq }
        let page = ChannelResume.page(cid: Self.general, userID: "bob", expected: 3, head: 6, rows: rows, openedAt: Self.opened(shard: 104))
        #expect(Self.replayed(page) == [3, 4, 6], "5 reached every connection of bob live; 6 went only to watching ones")
        // One node: its events' own sequences (channel seq + 100 here) tell the same.
        let alone = ChannelResume.page(cid: Self.general, userID: "bob", expected: 3, head: 6, rows: rows, openedAt: .afterEvent(104))
        #expect(Self.replayed(alone) == [3, 4, 6])
    }

    /// Issue 45: nodes commit shards' streams side by side, so a global sequence cannot tell what a
    /// node applied before a connection opened; each stream's own number can.
    @Test func whatReachedTheConnectionLiveIsToldByEachStreamsOwnNumber() {
        let own = EventAudience.user("bob")
        let rows = [
            Self.row(3, "notification.mark_read", own, entry: StreamPosition(stream: .cluster, number: 9)),
            Self.row(4, "notification.mark_read", own, entry: StreamPosition(stream: .cluster, number: 7)),
            Self.row(5, "notification.mark_read", own, entry: .some(nil)),
            Self.row(6, "notification.mark_read", own),
        ]
        let page = ChannelResume.page(cid: Self.general, userID: "bob", expected: 3, head: 6, rows: rows,
                                      openedAt: Self.opened(shard: 106, cluster: 7))
        #expect(Self.replayed(page) == [4, 5, 6], "3 came after the cluster stream's 7; 5's entry is not known, so it is not taken for live")
        let never = ChannelResume.page(cid: Self.general, userID: "bob", expected: 3, head: 6, rows: rows)
        #expect(Self.replayed(never) == [3, 4, 5, 6], "a connection not known to be open received none of them live")
    }

    @Test(arguments: [EventAudience.watchers, .user("bob"), .userWatching("carol"), .nonWatchingMembers])
    func audienceSurvivesStorage(_ audience: EventAudience) {
        #expect(EventAudience(storedValue: audience.storedValue) == audience)
    }

    @Test func unknownStoredAudienceIsRefused() {
        #expect(EventAudience(storedValue: "user:") == nil && EventAudience(storedValue: "everyone") == nil)
    }

    @Test func prunedStartIsReportedNotSkipped() {
        let page = ChannelResume.page(cid: Self.general, userID: "bob", expected: 3, head: 6, rows: [Self.row(5), Self.row(6)])
        #expect(Self.reason(page)?.contains("from 5 on") == true, "a pruned journal must not replay a partial history")
    }

    @Test func missingTailIsReportedNotSkipped() {
        // The first page read 3 and 4; the next finds nothing where 5 and 6 should be.
        let page = ChannelResume.page(cid: Self.general, userID: "bob", expected: 5, head: 6, rows: [])
        #expect(Self.reason(page)?.contains("after 4") == true)
    }

    @Test func eventsWithoutAudienceCannotBeResumedFrom() {
        let page = ChannelResume.page(cid: Self.general, userID: "bob", expected: 3, head: 4, rows: [Self.row(3), Self.row(4, "message.read", nil)])
        #expect(Self.reason(page)?.contains("older version") == true, "an event of unknown audience might be private: refuse")
    }
}
