import CheckmarkCore
import CheckmarkServer
import CheckmarkStorage
import Testing

/// What a resume replays, decided from journal rows alone (docs/protocol.md, Resuming a channel).
@Suite("Resume: which missed events a watcher gets")
struct ChannelResumeTests {
    static let general = ChannelCID(type: "messaging", id: "general")

    static func row(_ seq: Int64, _ type: String = "message.new", _ audience: EventAudience? = .watchers) -> JournalEvent {
        JournalEvent(seq: seq + 100, cid: general, channelSeq: seq, type: type, audience: audience, json: Array("{}".utf8))
    }

    static func replayed(_ resume: ChannelResume?) -> [Int64]? {
        guard case .replayed(let events)? = resume?.outcome else { return nil }
        return events.compactMap(\.channelSeq)
    }

    @Test(arguments: [
        // (after, head, maxEvents, needs the journal, replays nothing, reason contains)
        (Int64(-1), Int64(5), 100, false, false, "negative"),
        (7, 5, 100, false, false, "no event 7"),
        (0, 200, 100, false, false, "more than the 100"),
        (5, 5, 100, false, true, ""),
        (2, 5, 100, true, false, ""),
    ])
    func precheckDecidesWithoutTheJournalWhereItCan(after: Int64, head: Int64, max: Int, readsJournal: Bool, empty: Bool, reason: String) {
        let early = ChannelResume.precheck(cid: Self.general, after: after, head: head, maxEvents: max)
        #expect((early == nil) == readsJournal)
        if empty { #expect(Self.replayed(early) == []) }
        if !reason.isEmpty {
            guard case .unavailable(let text)? = early?.outcome else {
                Issue.record("expected unavailable, got \(String(describing: early))")
                return
            }
            #expect(text.contains(reason))
        }
    }

    @Test func watcherGetsEveryEventMeantForWatchersAndOnlyItsOwnPrivateOnes() {
        let rows = [
            Self.row(3), Self.row(4, "message.read", .userWatching("carol")), Self.row(5, "notification.mark_read", .user("bob")),
            Self.row(6, "notification.message_new", .nonWatchingMembers), Self.row(7, "message.read"),
        ]
        let bob = ChannelResume.build(cid: Self.general, userID: "bob", after: 2, head: 7, rows: rows)
        #expect(Self.replayed(bob) == [3, 5, 7], "carol's private read and the non-watcher notification are not bob's")
        let carol = ChannelResume.build(cid: Self.general, userID: "carol", after: 2, head: 7, rows: rows)
        #expect(Self.replayed(carol) == [3, 4, 7])
    }

    @Test func ownNotificationsEmittedWhileTheConnectionWasOpenAreNotReplayedAgain() {
        // Rows' global sequences are channel seq + 100; the connection opened after event 104.
        let rows = [Self.row(3, "notification.mark_read", .user("bob")), Self.row(5, "notification.mark_read", .user("bob")),
                    Self.row(6, "message.read", .userWatching("bob")), Self.row(4)]
            .sorted { $0.seq < $1.seq }
        let resume = ChannelResume.build(cid: Self.general, userID: "bob", after: 2, head: 6, rows: rows, openedAfterEventSeq: 104)
        #expect(Self.replayed(resume) == [3, 4, 6], "5 reached every connection of bob live; 6 went only to watching ones")
    }

    @Test(arguments: [EventAudience.watchers, .user("bob"), .userWatching("carol"), .nonWatchingMembers])
    func audienceSurvivesStorage(_ audience: EventAudience) {
        #expect(EventAudience(storedValue: audience.storedValue) == audience)
    }

    @Test func unknownStoredAudienceIsRefused() {
        #expect(EventAudience(storedValue: "user:") == nil && EventAudience(storedValue: "everyone") == nil)
    }

    @Test func prunedStartIsReportedNotSkipped() {
        let resume = ChannelResume.build(cid: Self.general, userID: "bob", after: 2, head: 6, rows: [Self.row(5), Self.row(6)])
        guard case .unavailable(let reason) = resume.outcome else {
            Issue.record("a pruned journal must not replay a partial history")
            return
        }
        #expect(reason.contains("from 5 on"))
    }

    @Test func missingTailIsReportedNotSkipped() {
        let resume = ChannelResume.build(cid: Self.general, userID: "bob", after: 2, head: 6, rows: [Self.row(3), Self.row(4)])
        #expect(Self.replayed(resume) == nil)
    }

    @Test func eventsWithoutAudienceCannotBeResumedFrom() {
        let resume = ChannelResume.build(cid: Self.general, userID: "bob", after: 2, head: 4, rows: [Self.row(3), Self.row(4, "message.read", nil)])
        guard case .unavailable(let reason) = resume.outcome else {
            Issue.record("an event of unknown audience might be private: refuse")
            return
        }
        #expect(reason.contains("older version"))
    }
}
