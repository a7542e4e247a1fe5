import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// Thread reads, as Stream has them: replies count for the thread's participants and never for the
/// channel; a thread read moves only the thread's state and tells the channel's watchers with the thread.
@Suite("Thread reads")
struct ThreadReadTests {
    /// a posts m1 in a channel of a, b and c; every user watches from one connection.
    static func started() throws -> Scenario {
        var s = Scenario()
        try s.users("a", "b", "c")
        try s.channel(members: ["a", "b", "c"])
        try s.connect("a1", as: "a")
        try s.connect("b1", as: "b")
        try s.connect("c1", as: "c")
        try s.send("a", "m1")
        try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        try s.run(.markRead(cid: Scenario.general, userID: "c", messageID: nil))
        return s
    }

    func threadUnread(_ s: Scenario, _ user: String, _ parent: String = "m1") -> Int? {
        s.engine.channels[Scenario.general]!.threads[parent]?.reads[user]?.unreadReplies
    }

    @Test func replyCountsForTheParentsAuthorAndNotInTheChannel() throws {
        var s = try Self.started()
        let outcome = try s.send("b", "r1", parent: "m1")
        #expect(threadUnread(s, "a") == 1)
        #expect(threadUnread(s, "b") == 0)
        #expect(threadUnread(s, "c") == nil)  // not a participant
        #expect(s.read("a").unreadMessages == 0)
        #expect(s.engine.counts(for: "a") == UnreadCounts(totalUnread: 0, unreadChannels: 0, unreadThreads: 1))
        let forA = try #require(outcome.events("message.new").first?.recipients.first { $0.userID == "a" })
        #expect(forA.counts == UnreadCounts(totalUnread: 0, unreadChannels: 0, unreadThreads: 1))
        #expect(outcome.events("notification.message_new").isEmpty)
    }

    @Test func aReplyTellsTheThreadsOtherParticipantsOnEveryConnectionWithTheirCounts() throws {
        var s = try Self.started()
        try s.connect("a2", as: "a", watching: [])  // a's connection that does not watch the channel
        let first = try s.send("b", "r1", parent: "m1")
        let told = try #require(first.events("notification.thread_message_new").first)
        #expect(told.recipients.map(\.connectionID) == ["a1", "a2"], "the parent's author, on every connection; not the replier")
        #expect(told.recipients.first?.counts == UnreadCounts(totalUnread: 0, unreadChannels: 0, unreadThreads: 1))
        #expect(told.audience == .threadParticipants && !told.isReplayable)
        try s.run(.markThreadRead(cid: Scenario.general, userID: "c", parentID: "m1"))  // c joins by reading it
        let second = try s.send("a", "r2", parent: "m1")
        #expect(second.receivers("notification.thread_message_new") == ["b1", "c1"])
        // A channel message tells no thread.
        #expect(try s.send("c", "m2").events("notification.thread_message_new").isEmpty)
    }

    @Test func ownReplyReadsTheThreadUpToIt() throws {
        var s = try Self.started()
        try s.send("b", "r1", parent: "m1")
        try s.send("a", "r2", parent: "m1")
        #expect(threadUnread(s, "a") == 0)
        #expect(threadUnread(s, "b") == 1)
        #expect(s.engine.counts(for: "a").unreadThreads == 0)
    }

    @Test func silentRepliesDoNotCount() throws {
        var s = try Self.started()
        try s.send("b", "r1", parent: "m1", silent: true)
        #expect(threadUnread(s, "a") == 0)
        #expect(s.engine.counts(for: "a").unreadThreads == 0)
    }

    @Test func showInChannelReplyCountsInBothTheThreadAndTheChannel() throws {
        var s = try Self.started()
        try s.send("b", "r1", parent: "m1", showInChannel: true)
        #expect(threadUnread(s, "a") == 1)
        #expect(s.read("a").unreadMessages == 1)
    }

    @Test func threadReadMovesOnlyTheThreadAndTellsTheOtherParticipantsWithTheThread() throws {
        var s = try Self.started()
        try s.send("b", "r1", parent: "m1")
        try s.send("c", "r2", parent: "m1")
        try s.send("b", "m2")
        #expect(s.read("a").unreadMessages == 1)
        let outcome = try s.run(.markThreadRead(cid: Scenario.general, userID: "a", parentID: "m1"))
        #expect(threadUnread(s, "a") == 0)
        #expect(s.read("a").unreadMessages == 1)  // the channel's count is untouched
        #expect(s.engine.counts(for: "a") == UnreadCounts(totalUnread: 1, unreadChannels: 1, unreadThreads: 0))
        let read = try #require(outcome.events("message.read").first)
        guard case .messageRead(_, let lastRead, let thread) = read.payload else { Issue.record("not a message.read"); return }
        #expect(lastRead == "r2")
        #expect(thread?.parentID == "m1" && thread?.replyCount == 2 && thread?.participantCount == 3)
        // The other participants watching; never the reader's own connections (Stream's SDKs take a
        // message.read of their own user as a read of the whole channel).
        #expect(Set(read.recipients.map(\.connectionID)) == ["b1", "c1"])
        #expect(read.audience == .watchersAmong(["b", "c"]))
        let mark = try #require(outcome.events("notification.mark_read").first)
        guard case .notificationMarkRead(_, let markLast, let markThread, let channel) = mark.payload else { Issue.record("not a mark_read"); return }
        #expect(markLast == "r2" && markThread == thread)  // the iOS SDK takes a read without `thread` for the channel's
        #expect(channel?.cid == Scenario.general)  // Stream's SDKs take a notification.mark_read without it for mark-all-read
        #expect(mark.recipients.map(\.connectionID) == ["a1"])
        #expect(mark.recipients[0].counts == UnreadCounts(totalUnread: 1, unreadChannels: 1, unreadThreads: 0))
    }

    @Test func threadReadDoesNotRaiseTheChannelsPointers() throws {
        var s = try Self.started()
        try s.send("b", "m2")
        try s.send("b", "r1", parent: "m1")
        let before = s.read("a")
        try s.run(.markThreadRead(cid: Scenario.general, userID: "a", parentID: "m1"))
        #expect(s.read("a") == before)
    }

    @Test func privateReaderThreadReadReachesNobodyElse() throws {
        var s = try Self.started()
        try s.run(.updateUser(UserPatch(id: "a", set: [("privacy_settings", .object([("read_receipts", .object([("enabled", .bool(false))]))]))])))
        try s.send("b", "r1", parent: "m1")
        let outcome = try s.run(.markThreadRead(cid: Scenario.general, userID: "a", parentID: "m1"))
        #expect(outcome.receivers("message.read").isEmpty)
        #expect(outcome.receivers("notification.mark_read") == ["a1"])
    }

    @Test func readEventsOffEmitsNoThreadMessageRead() throws {
        var s = Scenario()
        try s.users("a", "b")
        try s.run(.createChannelType(ChannelType(name: "quiet", readEvents: false)))
        let quiet = ChannelCID(type: "quiet", id: "q")
        try s.channel(quiet, members: ["a", "b"])
        try s.connect("b1", as: "b", watching: [quiet])
        try s.send("a", "m1", in: quiet)
        try s.send("b", "r1", in: quiet, parent: "m1")
        let outcome = try s.run(.markThreadRead(cid: quiet, userID: "a", parentID: "m1"))
        #expect(outcome.events("message.read").isEmpty)
        #expect(outcome.events("notification.mark_read").count == 1)
    }

    @Test func nonParticipantWatchersDoNotGetTheThreadRead() throws {
        var s = try Self.started()
        try s.send("b", "r1", parent: "m1")
        // c watches the channel but never took part in the thread.
        let outcome = try s.run(.markThreadRead(cid: Scenario.general, userID: "a", parentID: "m1"))
        #expect(outcome.receivers("message.read") == ["b1"])
    }

    @Test func threadAudienceSurvivesTheJournal() {
        let audience = EventAudience.watchersAmong(["b", "c:d"])
        #expect(EventAudience(storedValue: audience.storedValue) == audience)
        #expect(audience.reachesWatcher("b") && !audience.reachesWatcher("a"))
    }

    @Test func repeatedThreadReadChangesNothing() throws {
        var s = try Self.started()
        try s.send("b", "r1", parent: "m1")
        try s.run(.markThreadRead(cid: Scenario.general, userID: "a", parentID: "m1"))
        let again = try s.run(.markThreadRead(cid: Scenario.general, userID: "a", parentID: "m1"))
        #expect(!again.changed && again.events.isEmpty)
    }

    @Test func unknownThreadOrAReplyAsThreadIsRefusedNamingThreadID() throws {
        var s = try Self.started()
        try s.send("b", "r1", parent: "m1")
        for parent in ["nope", "r1"] {
            let error = s.refuse(.markThreadRead(cid: Scenario.general, userID: "a", parentID: parent))
            guard case .invalidArgument(let text) = error else { Issue.record("\(parent): \(String(describing: error))"); continue }
            #expect(text.contains("thread_id"))
        }
    }

    @Test func removedMemberLeavesItsThreadsAndTheirCount() throws {
        var s = try Self.started()
        try s.send("b", "r1", parent: "m1")
        #expect(s.engine.counts(for: "a").unreadThreads == 1)
        try s.run(.removeMembers(cid: Scenario.general, userIDs: ["a"]))
        #expect(threadUnread(s, "a") == nil)
        #expect(s.engine.counts(for: "a").unreadThreads == 0)
    }

    @Test func restoreRecomputesThreadCountsFromThePointers() throws {
        var s = try Self.started()
        try s.send("b", "r1", parent: "m1")
        try s.send("c", "r2", parent: "m1")
        try s.send("a", "m2")
        try s.send("c", "r3", parent: "m2")
        try s.run(.markThreadRead(cid: Scenario.general, userID: "b", parentID: "m1"))
        let restored = ReceiptsEngine(restoring: s.engine.snapshot())
        for user in ["a", "b", "c"] { #expect(restored.counts(for: user) == s.engine.counts(for: user)) }
        #expect(restored.channels[Scenario.general]!.threads == s.engine.channels[Scenario.general]!.threads)
        #expect(restored.channels[Scenario.general]!.channelMessagePositions == s.engine.channels[Scenario.general]!.channelMessagePositions)
        #expect(try restored.unreadThreads(of: "a").map(\.parentID) == ["m1", "m2"])
    }

    @Test func threadReadSurvivesTheJournalsTextForm() throws {
        let command = ReceiptsCommand.markThreadRead(cid: Scenario.general, userID: "a", parentID: "m1")
        #expect(try CommandCodec.decode(CommandCodec.encode(command)) == command)
    }
}
