import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// Each user's unread totals sit at a slot the engine gives (a new message reaches its members'
/// totals by index): bookkeeping of one engine, never part of what a member or its state is.
@Suite("Totals slots")
struct TotalsSlotTests {
    /// Channel "z" and its member first, then channel "a": the live engine gives `x` the first slot,
    /// a restored one (channels in cid order) gives it to `y`.
    static func twoChannels() throws -> Scenario {
        var s = Scenario()
        try s.users("x", "y", "author")
        try s.channel(ChannelCID(type: "messaging", id: "z"), members: ["x", "author"])
        try s.channel(ChannelCID(type: "messaging", id: "a"), members: ["y", "author"])
        try s.run(.sendMessage(cid: ChannelCID(type: "messaging", id: "z"), userID: "author", draft: MessageDraft(text: "to x")))
        try s.run(.sendMessage(cid: ChannelCID(type: "messaging", id: "a"), userID: "author", draft: MessageDraft(text: "to y")))
        return s
    }

    @Test func membersCompareEqualWhateverTheirSlots() throws {
        let s = try Self.twoChannels()
        let restored = ReceiptsEngine(restoring: s.engine.snapshot())
        for cid in ["z", "a"].map({ ChannelCID(type: "messaging", id: $0) }) {
            #expect(restored.channels[cid]!.members == s.engine.channels[cid]!.members)
            #expect(Set(restored.channels[cid]!.members.values) == Set(s.engine.channels[cid]!.members.values))
        }
        #expect(restored.channels[ChannelCID(type: "messaging", id: "z")]!.members["x"]!.totalsSlot
            != s.engine.channels[ChannelCID(type: "messaging", id: "z")]!.members["x"]!.totalsSlot)
    }

    @Test func aRestoredEngineCountsNewMessagesForTheRightUsers() throws {
        var s = try Self.twoChannels()
        s.engine = ReceiptsEngine(restoring: s.engine.snapshot())
        try s.run(.sendMessage(cid: ChannelCID(type: "messaging", id: "z"), userID: "author", draft: MessageDraft(text: "x again")))
        #expect(s.engine.counts(for: "x") == UnreadCounts(totalUnread: 2, unreadChannels: 1))
        #expect(s.engine.counts(for: "y") == UnreadCounts(totalUnread: 1, unreadChannels: 1))
        #expect(s.engine.totals["x"] == s.engine.counts(for: "x"))
    }

    @Test func aWatcherGetsItsOwnUsersCounts() throws {
        var s = try Self.twoChannels()
        s.engine = ReceiptsEngine(restoring: s.engine.snapshot())
        try s.run(.connect(connectionID: "cx", userID: "x"))
        try s.run(.watch(connectionID: "cx", cid: ChannelCID(type: "messaging", id: "z")))
        let outcome = try s.run(.sendMessage(cid: ChannelCID(type: "messaging", id: "z"), userID: "author", draft: MessageDraft(text: "x again")))
        let recipient = try #require(outcome.events.first { $0.type == "message.new" }?.recipients.first { $0.connectionID == "cx" })
        #expect(recipient.counts == UnreadCounts(totalUnread: 2, unreadChannels: 1))
    }
}
