import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// Contract rules 1-5: pointers, read implies delivered, the sender's state, counting, delivery scope.
@Suite("Receipt rules 1-5")
struct ReceiptRulesTests {
    /// A scenario with users a, b, c in messaging:general (delivery events on), each watching on one connection.
    static func trio(deliveryEvents: Bool = true) throws -> Scenario {
        var s = Scenario()
        try s.users("a", "b", "c")
        try s.run(.updateChannelType(name: "messaging", readEvents: nil, deliveryEvents: deliveryEvents))
        try s.channel(members: ["a", "b", "c"])
        try s.connect("a1", as: "a")
        try s.connect("b1", as: "b")
        try s.connect("c1", as: "c")
        return s
    }

    @Test func duplicateMarkReadChangesNothingAndEmitsNothing() throws {
        var s = try Self.trio()
        try s.send("a", "m1")
        let first = try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        #expect(first.receivers("message.read") == ["a1", "b1", "c1"])
        let before = s.read("b")
        let second = try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        #expect(second.events.isEmpty)
        #expect(!second.changed)
        #expect(s.read("b") == before)
    }

    @Test func markReadOfOlderMessageNeverMovesPointerBack() throws {
        var s = try Self.trio()
        try s.send("a", "m1")
        try s.send("a", "m2")
        try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: "m2"))
        let outcome = try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: "m1"))
        #expect(outcome.events.isEmpty)
        #expect(s.read("b").lastReadMessageID == "m2")
        #expect(s.read("b").unreadMessages == 0)
    }

    @Test func duplicateDeliveryConfirmationIsIgnored() throws {
        var s = try Self.trio()
        try s.send("a", "m1")
        let first = try s.run(.markDelivered(userID: "b", latest: [DeliveredTarget(cid: Scenario.general, messageID: "m1")]))
        #expect(first.receivers("message.delivered") == ["a1", "b1", "c1"])
        let again = try s.run(.markDelivered(userID: "b", latest: [DeliveredTarget(cid: Scenario.general, messageID: "m1")]))
        #expect(again.events.isEmpty && !again.changed)
    }

    @Test func readRaisesDeliveredWithoutDeliveredEvent() throws {
        var s = try Self.trio()
        try s.send("a", "m1")
        try s.send("a", "m2")
        let outcome = try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: "m2"))
        #expect(outcome.events("message.delivered").isEmpty)
        let read = s.read("b")
        #expect(read.deliveredPosition >= read.readPosition)
        #expect(read.lastDeliveredMessageID == "m2")
        #expect(read.lastDeliveredAt! >= s.message("m2").createdAt)
    }

    @Test func sendingReadsUpToOwnMessage() throws {
        var s = try Self.trio()
        try s.send("b", "m1")
        try s.send("a", "m2")
        #expect(s.read("a").unreadMessages == 0)
        #expect(s.read("a").lastReadMessageID == "m2")
        #expect(s.read("a").lastRead == s.message("m2").createdAt)
        #expect(s.read("c").unreadMessages == 2)
    }

    @Test(arguments: [
        (silent: false, thread: false, showInChannel: false, kind: Message.Kind.regular, counts: true),
        (silent: true, thread: false, showInChannel: false, kind: .regular, counts: false),
        (silent: false, thread: true, showInChannel: false, kind: .regular, counts: false),
        (silent: false, thread: true, showInChannel: true, kind: .regular, counts: true),
        (silent: false, thread: false, showInChannel: false, kind: .system, counts: true),
    ])
    func unreadCountingFollowsRule4(silent: Bool, thread: Bool, showInChannel: Bool, kind: Message.Kind, counts: Bool) throws {
        var s = try Self.trio()
        try s.send("a", "root")
        try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        try s.send("a", "m", parent: thread ? "root" : nil, showInChannel: showInChannel, silent: silent, kind: kind)
        #expect(s.read("b").unreadMessages == (counts ? 1 : 0))
        #expect(s.read("a").unreadMessages == 0, "own messages never count")
        #expect(s.engine.counts(for: "b").totalUnread == (counts ? 1 : 0))
    }

    @Test func deliveryOfThreadOnlyReplyIsIgnored() throws {
        var s = try Self.trio()
        try s.send("a", "root")
        try s.send("a", "reply", parent: "root")
        let outcome = try s.run(.markDelivered(userID: "b", latest: [DeliveredTarget(cid: Scenario.general, messageID: "reply")]))
        #expect(outcome.events.isEmpty && !outcome.changed)
    }

    @Test func deliveryOfOwnMessageIsIgnored() throws {
        var s = try Self.trio()
        try s.send("b", "mine")
        let outcome = try s.run(.markDelivered(userID: "b", latest: [DeliveredTarget(cid: Scenario.general, messageID: "mine")]))
        #expect(outcome.events.isEmpty && !outcome.changed)
    }

    @Test func deliveryIsIgnoredWhenChannelTypeHasDeliveryEventsOff() throws {
        var s = try Self.trio(deliveryEvents: false)
        try s.send("a", "m1")
        let outcome = try s.run(.markDelivered(userID: "b", latest: [DeliveredTarget(cid: Scenario.general, messageID: "m1")]))
        #expect(outcome.events.isEmpty && !outcome.changed)
        #expect(s.read("b").lastDeliveredMessageID == nil)
    }

    @Test func deliveryToUnknownMessageIsRefusedBeforeAnythingChanges() throws {
        var s = try Self.trio()
        try s.send("a", "m1")
        let error = s.refuse(.markDelivered(userID: "b", latest: [
            DeliveredTarget(cid: Scenario.general, messageID: "m1"), DeliveredTarget(cid: Scenario.general, messageID: "nope"),
        ]))
        #expect(error == .unknownMessage("nope"))
        #expect(s.read("b").lastDeliveredMessageID == nil)
    }

    @Test func deliveredTimeKeepsNewerMessagesUndelivered() throws {
        var s = try Self.trio()
        try s.send("a", "m1")
        try s.send("a", "m2")
        try s.run(.markDelivered(userID: "b", latest: [DeliveredTarget(cid: Scenario.general, messageID: "m1")]))
        let read = s.read("b")
        // A client deriving "delivered" as last_delivered_at >= created_at sees m1 delivered, m2 not.
        #expect(read.lastDeliveredAt! >= s.message("m1").createdAt)
        #expect(read.lastDeliveredAt! < s.message("m2").createdAt)
    }

    @Test func nonMemberCannotConfirm() throws {
        var s = try Self.trio()
        try s.users("outsider")
        try s.send("a", "m1")
        #expect(s.refuse(.markRead(cid: Scenario.general, userID: "outsider", messageID: nil)) == .notAMember(user: "outsider", cid: Scenario.general))
        #expect(s.refuse(.sendMessage(cid: Scenario.general, userID: "outsider", draft: MessageDraft(text: "hi"))) == .notAMember(user: "outsider", cid: Scenario.general))
    }

    @Test func markReadRefusesAnyBadTargetBeforeMovingAnyPointer() throws {
        var s = try Self.trio()
        let other = ChannelCID(type: "messaging", id: "other")
        try s.channel(other, members: ["a", "b"])
        try s.send("a", "m1")
        try s.send("a", "r1", parent: "m1")
        try s.send("a", "o1", in: other)
        let missing = ChannelCID(type: "messaging", id: "missing")
        let good = ChannelReadTarget(cid: other, messageID: nil)
        #expect(s.refuse(.markReadMany(userID: "b", channels: [good, ChannelReadTarget(cid: missing, messageID: nil)])) == .unknownChannel(missing))
        #expect(s.refuse(.markReadMany(userID: "b", channels: [good, ChannelReadTarget(cid: Scenario.general, messageID: "nope")])) == .unknownMessage("nope"))
        #expect(s.refuse(.markRead(cid: Scenario.general, userID: "b", messageID: "r1")) == .invalidArgument(
            "message r1 is a thread reply; it does not move the channel's read state"))
        #expect(s.refuse(.markReadMany(userID: "c", channels: [good])) == .notAMember(user: "c", cid: other))
        // Nothing moved, in the channel named first either.
        #expect(s.read("b", in: other).readPosition == 0)
        #expect(s.read("b").readPosition == 0)
        // The same targets once valid move both pointers.
        _ = try s.run(.markReadMany(userID: "b", channels: [good, ChannelReadTarget(cid: Scenario.general, messageID: "m1")]))
        #expect(s.read("b", in: other).readPosition == 1)
        #expect(s.read("b").readPosition == 1)
    }

    @Test func messageTimesStrictlyIncreaseEvenWithAStoppedClock() throws {
        var s = try Self.trio()
        let time = Timestamp(rawValue: s.now + 10)
        _ = try s.engine.apply(.sendMessage(cid: Scenario.general, userID: "a", draft: MessageDraft(id: "x", text: "1")), at: time).get()
        _ = try s.engine.apply(.sendMessage(cid: Scenario.general, userID: "a", draft: MessageDraft(id: "y", text: "2")), at: time).get()
        #expect(s.message("x").createdAt < s.message("y").createdAt)
    }

    /// Regression (issue 18): message ids were global, so `409 already exists` told a user that an id
    /// was taken in a channel it cannot see. Ids are unique within a channel.
    @Test func messageIdTakenInAnotherChannelIsNotRevealed() throws {
        var s = Scenario()
        try s.users("a", "b", "c")
        let other = ChannelCID(type: "messaging", id: "other")
        try s.channel(members: ["a", "b"])
        try s.channel(other, members: ["c"])
        try s.send("c", "secret-id", in: other)
        try s.send("a", "secret-id")
        #expect(try s.engine.channels(holdingMessage: "secret-id") == [other, Scenario.general])
        guard case .duplicate = s.refuse(.sendMessage(cid: Scenario.general, userID: "b", draft: MessageDraft(id: "secret-id", text: "again"))) else {
            Issue.record("a duplicate within the channel was accepted")
            return
        }
    }
}
