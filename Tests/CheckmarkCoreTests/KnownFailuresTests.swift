import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// Regression tests named after failures seen in other implementations (contract: Known failures).
@Suite("Known failures of other implementations")
struct KnownFailuresTests {
    static let second = ChannelCID(type: "messaging", id: "second")

    static func scenario() throws -> Scenario {
        var s = Scenario()
        try s.users("a", "b")
        try s.channel(members: ["a", "b"])
        try s.channel(Self.second, members: ["a", "b"])
        try s.connect("b1", as: "b", watching: [Scenario.general, Self.second])
        return s
    }

    @Test func perChannelMarkReadCarriesTotalsOverAllChannels() throws {
        var s = try Self.scenario()
        try s.send("a", "g1")
        try s.send("a", "s1", in: Self.second)
        try s.send("a", "s2", in: Self.second)
        let outcome = try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        let event = try #require(outcome.events("notification.mark_read").first)
        #expect(event.recipients[0].counts == UnreadCounts(totalUnread: 2, unreadChannels: 1))
    }

    @Test func markReadUpToOlderMessageKeepsLaterOnesUnread() throws {
        var s = try Self.scenario()
        for id in ["m1", "m2", "m3", "m4"] { try s.send("a", id) }
        try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: "m2"))
        #expect(s.read("b").unreadMessages == 2)
    }

    @Test func serverSideMarkReadWithMessageIDReadsOnlyUpToIt() throws {
        var s = try Self.scenario()
        for id in ["m1", "m2", "m3"] { try s.send("a", id) }
        try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: "m1"))
        let read = s.read("b")
        #expect(read.lastReadMessageID == "m1")
        #expect(read.lastRead < s.message("m2").createdAt, "a client deriving reads from last_read must not see m2 read")
        #expect(read.unreadMessages == 2)
    }

    @Test func lastReadMessageIDIsNotTheLastMessageWhileUnreadRemain() throws {
        var s = try Self.scenario()
        for id in ["m1", "m2", "m3"] { try s.send("a", id) }
        try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        try s.run(.markUnread(cid: Scenario.general, userID: "b", from: .message("m2")))
        let read = s.read("b")
        #expect(read.unreadMessages == 2)
        #expect(read.lastReadMessageID == "m1")
    }

    @Test func threadReadDoesNotClearTheChannelCount() throws {
        var s = try Self.scenario()
        try s.send("a", "root")
        try s.send("a", "reply", parent: "root")
        #expect(s.refuse(.markRead(cid: Scenario.general, userID: "b", messageID: "reply")) != nil)
        #expect(s.read("b").unreadMessages == 1)
        // Replying in the thread does not read the channel either.
        try s.send("b", "answer", parent: "root")
        #expect(s.read("b").unreadMessages == 1)
    }

    @Test func ownAndSilentMessagesAreNeverCounted() throws {
        var s = try Self.scenario()
        try s.send("b", "own")
        try s.send("a", "quiet", silent: true)
        #expect(s.read("b").unreadMessages == 0)
        #expect(s.engine.counts(for: "b").totalUnread == 0)
    }
}
