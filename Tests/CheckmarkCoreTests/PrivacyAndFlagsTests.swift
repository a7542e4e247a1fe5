import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// Contract rules 6-9: user privacy settings and channel-type flags, effective from the next event.
@Suite("Privacy and channel-type flags (rules 6-9)")
struct PrivacyAndFlagsTests {
    static let hiddenReads = PrivacySettings(readReceipts: false, deliveryReceipts: true)
    static let hiddenDeliveries = PrivacySettings(readReceipts: true, deliveryReceipts: false)

    static func scenario(bPrivacy: PrivacySettings, readEvents: Bool = true, deliveryEvents: Bool = true) throws -> Scenario {
        var s = Scenario()
        try s.users("a", "c")
        try s.users("b", privacy: bPrivacy)
        try s.run(.updateChannelType(name: "messaging", readEvents: readEvents, deliveryEvents: deliveryEvents))
        try s.channel(members: ["a", "b", "c"])
        try s.connect("a1", as: "a")
        try s.connect("b1", as: "b")
        try s.connect("b2", as: "b", watching: [])
        try s.connect("c1", as: "c")
        try s.send("a", "m1")
        return s
    }

    @Test func readReceiptsOffKeepsMessageReadAwayFromOthers() throws {
        var s = try Self.scenario(bPrivacy: Self.hiddenReads)
        let outcome = try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        #expect(outcome.receivers("message.read") == ["b1"])
        #expect(outcome.receivers("notification.mark_read") == ["b1", "b2"])
        #expect(s.read("b").unreadMessages == 0, "their own counts still reset")
    }

    @Test func readReceiptsOffHidesReadStateFromOthersButNotFromThemselves() throws {
        var s = try Self.scenario(bPrivacy: Self.hiddenReads)
        try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        let seenByA = try s.engine.readStates(of: Scenario.general, viewer: "a").first { $0.user.id == "b" }
        #expect(seenByA?.lastRead == nil && seenByA?.lastReadMessageID == nil && seenByA?.unreadMessages == nil)
        #expect(seenByA?.lastDeliveredMessageID == "m1", "delivery stays visible")
        let seenByB = try s.engine.readStates(of: Scenario.general, viewer: "b").first { $0.user.id == "b" }
        #expect(seenByB?.lastReadMessageID == "m1" && seenByB?.unreadMessages == 0)
        let receipts = try s.engine.receipts(of: "m1", in: Scenario.general, viewer: "a")
        #expect(!receipts.readBy.contains { $0.user.id == "b" })
    }

    /// Regression (issue 18, privacy side channel): a read raised the delivered pointer to the read's
    /// own time, so a member with read receipts off who never confirmed delivery showed as "delivered
    /// at" exactly when it read, in `last_delivered_at` and in per-message receipts.
    @Test func privateReadLeavesNoReadTimeInWhatOthersSeeOfDelivery() throws {
        var s = try Self.scenario(bPrivacy: Self.hiddenReads)
        let sentAt = s.message("m1").createdAt
        try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        let readAt = s.read("b").lastRead
        #expect(readAt > sentAt)
        let seenByA = try #require(try s.engine.readStates(of: Scenario.general, viewer: "a").first { $0.user.id == "b" })
        #expect(seenByA.lastDeliveredMessageID == "m1", "delivery stays visible")
        #expect(seenByA.lastDeliveredAt == sentAt, "dated by the message, not by the read")
        let receipts = try s.engine.receipts(of: "m1", in: Scenario.general, viewer: "a")
        let delivered = try #require(receipts.deliveredTo.first { $0.user.id == "b" })
        #expect(delivered.at != readAt && delivered.at == sentAt)
    }

    @Test func deliveryReceiptsOffKeepsMessageDeliveredAwayFromOthers() throws {
        var s = try Self.scenario(bPrivacy: Self.hiddenDeliveries)
        let outcome = try s.run(.markDelivered(userID: "b", latest: [DeliveredTarget(cid: Scenario.general, messageID: "m1")]))
        #expect(outcome.receivers("message.delivered") == ["b1"])
        let seenByA = try s.engine.readStates(of: Scenario.general, viewer: "a").first { $0.user.id == "b" }
        #expect(seenByA?.lastDeliveredAt == nil && seenByA?.lastDeliveredMessageID == nil)
        let receipts = try s.engine.receipts(of: "m1", in: Scenario.general, viewer: "a")
        #expect(!receipts.deliveredTo.contains { $0.user.id == "b" })
    }

    @Test func readEventsOffEmitsNoMessageReadAndHidesOthersReads() throws {
        var s = try Self.scenario(bPrivacy: .init(), readEvents: false)
        let outcome = try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        #expect(outcome.events("message.read").isEmpty)
        #expect(outcome.receivers("notification.mark_read") == ["b1", "b2"])
        let seenByA = try s.engine.readStates(of: Scenario.general, viewer: "a").first { $0.user.id == "b" }
        #expect(seenByA?.lastRead == nil)
        #expect(s.read("b").unreadMessages == 0)
    }

    @Test func deliveryEventsOffEmitsNoMessageDelivered() throws {
        var s = try Self.scenario(bPrivacy: .init(), deliveryEvents: false)
        let outcome = try s.run(.markDelivered(userID: "b", latest: [DeliveredTarget(cid: Scenario.general, messageID: "m1")]))
        #expect(outcome.events("message.delivered").isEmpty)
    }

    @Test func privacyChangeTakesEffectForTheVeryNextEvent() throws {
        var s = try Self.scenario(bPrivacy: .init())
        try s.run(.updateUser(UserPatch(id: "b", set: [("privacy_settings", .object([("read_receipts", .object([("enabled", .bool(false))]))]))])))
        let hidden = try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        #expect(hidden.receivers("message.read") == ["b1"])
        try s.send("a", "m2")
        try s.run(.updateUser(UserPatch(id: "b", set: [("privacy_settings", .object([("read_receipts", .object([("enabled", .bool(true))]))]))])))
        let shown = try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        #expect(shown.receivers("message.read") == ["a1", "b1", "c1"])
    }

    @Test func channelTypeFlagChangeTakesEffectForTheVeryNextEvent() throws {
        var s = try Self.scenario(bPrivacy: .init())
        try s.run(.updateChannelType(name: "messaging", readEvents: false, deliveryEvents: nil))
        #expect(try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil)).events("message.read").isEmpty)
        try s.send("a", "m2")
        try s.run(.updateChannelType(name: "messaging", readEvents: true, deliveryEvents: nil))
        #expect(try s.run(.markRead(cid: Scenario.general, userID: "c", messageID: nil)).receivers("message.read") == ["a1", "b1", "c1"])
    }
}
