import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// One test per row of the contract's "Events and who receives them" table.
@Suite("Recipients table")
struct RecipientsTableTests {
    static let other = ChannelCID(type: "messaging", id: "other")

    /// a and b watch general; c is a member with a connection watching only `other`; d is a member
    /// with no connection; e is not a member.
    static func scenario() throws -> Scenario {
        var s = Scenario()
        try s.users("a", "b", "c", "d", "e")
        try s.run(.updateChannelType(name: "messaging", readEvents: nil, deliveryEvents: true))
        try s.channel(members: ["a", "b", "c", "d"])
        try s.channel(Self.other, members: ["c", "e"])
        try s.connect("a1", as: "a")
        try s.connect("b1", as: "b")
        try s.connect("c1", as: "c", watching: [Self.other])
        try s.connect("e1", as: "e", watching: [Self.other])
        return s
    }

    @Test func messageNewGoesToEveryWatcherIncludingTheSender() throws {
        var s = try Self.scenario()
        let outcome = try s.send("a", "m1")
        let event = try #require(outcome.events("message.new").first)
        #expect(event.recipients.map(\.connectionID) == ["a1", "b1"])
        #expect(event.recipients.first { $0.userID == "b" }?.counts == UnreadCounts(totalUnread: 1, unreadChannels: 1))
        #expect(event.recipients.first { $0.userID == "a" }?.counts == UnreadCounts(totalUnread: 0, unreadChannels: 0))
        if case .messageNew(_, _, let watcherCount) = event.payload { #expect(watcherCount == 2) }
    }

    @Test func notificationMessageNewGoesToMembersConnectedButNotWatching() throws {
        var s = try Self.scenario()
        let outcome = try s.send("a", "m1")
        let event = try #require(outcome.events("notification.message_new").first)
        #expect(event.recipients.map(\.connectionID) == ["c1"])
        #expect(event.recipients[0].counts == UnreadCounts(totalUnread: 1, unreadChannels: 1))
        // Stream's JS SDK sets a loaded channel's watcher count from any event's `watcher_count`.
        guard case .notificationMessageNew(_, _, _, let watcherCount) = event.payload else { Issue.record("\(event.payload)"); return }
        #expect(watcherCount == 2)
    }

    /// Regression (cluster nodes disagreed on sequences): which events a command makes must not
    /// depend on who is connected, or nodes holding different connections number them differently.
    @Test func notificationMessageNewIsMadeEvenWhenNoConnectionReceivesIt() throws {
        var s = Scenario()
        try s.users("a", "b")
        try s.channel(members: ["a", "b"])
        let outcome = try s.send("a", "m1")
        #expect(outcome.events.map(\.type) == ["message.new", "notification.message_new"])
        #expect(outcome.events("notification.message_new").first?.recipients.isEmpty == true)
        #expect(outcome.events("notification.message_new").first?.audience == .nonWatchingMembers)
    }

    /// The service asks whether an event is replayable without making its audience: both must say the
    /// same for every kind of event, thread reads and private receipts included.
    @Test func anEventIsReplayableExactlyWhenItsAudienceIs() throws {
        var s = try Self.scenario()
        try s.users("p", privacy: PrivacySettings(readReceipts: false, deliveryReceipts: false))
        try s.run(.addMembers(cid: Scenario.general, userIDs: ["p"]))
        var events = try s.send("a", "m1").events
        events += try s.send("b", "r1", parent: "m1").events
        events += try s.run(.markRead(cid: Scenario.general, userID: "c", messageID: nil)).events
        events += try s.run(.markRead(cid: Scenario.general, userID: "p", messageID: nil)).events
        events += try s.run(.markThreadRead(cid: Scenario.general, userID: "a", parentID: "m1")).events
        events += try s.run(.markThreadRead(cid: Scenario.general, userID: "p", parentID: "m1")).events
        events += try s.run(.markDelivered(userID: "d", latest: [DeliveredTarget(cid: Scenario.general, messageID: "m1")])).events
        try s.send("a", "m2")
        events += try s.run(.markDelivered(userID: "p", latest: [DeliveredTarget(cid: Scenario.general, messageID: "m2")])).events
        events += try s.run(.markUnread(cid: Scenario.general, userID: "c", from: .message("m1"))).events
        events += try s.run(.markReadMany(userID: "c", channels: nil)).events
        let audiences = events.map(\.audience)
        #expect(audiences.contains(.nonWatchingMembers) && audiences.contains(.userWatching("p")))
        #expect(audiences.contains { if case .watchersAmong = $0 { true } else { false } })
        #expect(events.contains { $0.type == "notification.mark_read" && $0.cid == nil }, "a mark-all-read")
        for event in events { #expect(event.isReplayable == event.audience.isReplayable, "\(event.type): \(event.audience)") }
    }

    @Test func messageReadGoesToWatchers() throws {
        var s = try Self.scenario()
        try s.send("a", "m1")
        let outcome = try s.run(.markRead(cid: Scenario.general, userID: "c", messageID: nil))
        #expect(outcome.receivers("message.read") == ["a1", "b1"])
        let event = try #require(outcome.events("message.read").first)
        #expect(event.createdAt == s.read("c").lastRead, "created_at is the reader's new last_read")
    }

    @Test func messageDeliveredGoesToWatchers() throws {
        var s = try Self.scenario()
        try s.send("a", "m1")
        let outcome = try s.run(.markDelivered(userID: "c", latest: [DeliveredTarget(cid: Scenario.general, messageID: "m1")]))
        #expect(outcome.receivers("message.delivered") == ["a1", "b1"])
    }

    @Test func notificationMarkReadGoesOnlyToTheReadersConnections() throws {
        var s = try Self.scenario()
        try s.send("a", "m1")
        let outcome = try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        #expect(outcome.receivers("notification.mark_read") == ["b1"])
        let event = try #require(outcome.events("notification.mark_read").first)
        #expect(event.cid == Scenario.general)
        // Stream's SDKs tell a channel's read from mark-all-read by the channel object (iOS: `channel == nil`).
        guard case .notificationMarkRead(_, _, nil, let channel?) = event.payload else { Issue.record("no channel: \(event.payload)"); return }
        #expect(channel.cid == Scenario.general && channel.memberCount == 4)
    }

    @Test func markAllReadSendsOneNotificationWithoutChannelFields() throws {
        var s = try Self.scenario()
        try s.send("a", "m1")
        try s.send("e", "o1", in: Self.other)
        let outcome = try s.run(.markReadMany(userID: "c", channels: nil))
        let notifications = outcome.events("notification.mark_read")
        #expect(notifications.count == 1)
        #expect(notifications[0].cid == nil)
        guard case .notificationMarkRead(_, nil, nil, nil) = notifications[0].payload else { Issue.record("channel fields: \(notifications[0].payload)"); return }
        #expect(notifications[0].recipients.map(\.connectionID) == ["c1"])
        #expect(notifications[0].recipients[0].counts == UnreadCounts(totalUnread: 0, unreadChannels: 0))
        #expect(outcome.events("message.read").compactMap(\.cid) == [Scenario.general, Self.other])
    }

    @Test func notificationMarkUnreadGoesOnlyToTheActingUsersConnections() throws {
        var s = try Self.scenario()
        try s.send("a", "m1")
        try s.send("a", "m2")
        try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        let outcome = try s.run(.markUnread(cid: Scenario.general, userID: "b", from: .message("m2")))
        #expect(outcome.events.map(\.type) == ["notification.mark_unread"])
        #expect(outcome.receivers("notification.mark_unread") == ["b1"])
    }

    @Test func nonMembersReceiveNothing() throws {
        var s = try Self.scenario()
        try s.send("a", "m1")
        let all = try [
            s.send("b", "m2"), s.run(.markRead(cid: Scenario.general, userID: "c", messageID: nil)),
            s.run(.markDelivered(userID: "b", latest: [DeliveredTarget(cid: Scenario.general, messageID: "m1")])),
        ]
        #expect(!all.flatMap(\.events).flatMap(\.recipients).contains { $0.userID == "e" })
    }

    @Test func onlyMembersMayWatch() throws {
        var s = try Self.scenario()
        #expect(s.refuse(.watch(connectionID: "e1", cid: Scenario.general)) == .notAMember(user: "e", cid: Scenario.general))
    }

    @Test func removedMemberStopsWatchingAndLosesUnread() throws {
        var s = try Self.scenario()
        try s.send("a", "m1")
        try s.run(.removeMembers(cid: Scenario.general, userIDs: ["b"]))
        #expect(s.engine.counts(for: "b") == UnreadCounts())
        let outcome = try s.send("a", "m2")
        #expect(outcome.receivers("message.new") == ["a1"])
    }
}
