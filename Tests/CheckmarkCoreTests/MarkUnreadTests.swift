import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// Mark unread: by message or time, only within the channel's last 100 messages.
@Suite("Mark unread")
struct MarkUnreadTests {
    static func scenario(messages: Int) throws -> Scenario {
        var s = Scenario()
        try s.users("a", "b")
        try s.channel(members: ["a", "b"])
        try s.connect("b1", as: "b")
        for i in 1...messages { try s.send("a", "m\(i)") }
        try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        return s
    }

    @Test func markUnreadSetsPointerBeforeTheMessageAndReportsIt() throws {
        var s = try Self.scenario(messages: 5)
        let outcome = try s.run(.markUnread(cid: Scenario.general, userID: "b", from: .message("m3")))
        let read = s.read("b")
        #expect(read.unreadMessages == 3)
        #expect(read.lastReadMessageID == "m2")
        #expect(read.lastRead >= s.message("m2").createdAt && read.lastRead < s.message("m3").createdAt)
        let event = try #require(outcome.events.first)
        guard case .notificationMarkUnread(_, let first, let last, let at, let unread) = event.payload else {
            Issue.record("wrong payload")
            return
        }
        #expect(first == "m3" && last == "m2" && at == read.lastRead && unread == 3)
        #expect(event.recipients[0].counts == UnreadCounts(totalUnread: 3, unreadChannels: 1))
        #expect(try s.engine.readStates(of: Scenario.general, viewer: "b").first { $0.user.id == "b" }?.firstUnreadMessageID == "m3")
    }

    @Test func markUnreadDoesNotMoveTheDeliveredPointer() throws {
        var s = try Self.scenario(messages: 3)
        let delivered = s.read("b").lastDeliveredMessageID
        try s.run(.markUnread(cid: Scenario.general, userID: "b", from: .message("m1")))
        #expect(s.read("b").lastDeliveredMessageID == delivered)
        #expect(s.read("b").deliveredPosition >= s.read("b").readPosition)
    }

    @Test func markUnreadByTimestampStartsAtFirstMessageAtOrAfterIt() throws {
        var s = try Self.scenario(messages: 4)
        try s.run(.markUnread(cid: Scenario.general, userID: "b", from: .timestamp(s.message("m3").createdAt)))
        #expect(s.read("b").unreadMessages == 2)
    }

    @Test func messageOneHundredBackIsAllowedAndOneHundredAndOneIsNot() throws {
        var s = try Self.scenario(messages: 101)
        #expect(s.refuse(.markUnread(cid: Scenario.general, userID: "b", from: .message("m1"))) == .messageTooOld("m1"))
        try s.run(.markUnread(cid: Scenario.general, userID: "b", from: .message("m2")))
        #expect(s.read("b").unreadMessages == 100)
    }

    @Test func markUnreadOfUnknownMessageIsRefused() throws {
        var s = try Self.scenario(messages: 1)
        #expect(s.refuse(.markUnread(cid: Scenario.general, userID: "b", from: .message("nope"))) == .unknownMessage("nope"))
    }

    @Test func repeatedMarkUnreadChangesNothing() throws {
        var s = try Self.scenario(messages: 2)
        try s.run(.markUnread(cid: Scenario.general, userID: "b", from: .message("m2")))
        let again = try s.run(.markUnread(cid: Scenario.general, userID: "b", from: .message("m2")))
        #expect(!again.changed && again.events.isEmpty)
    }
}
