import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// Rule 10 and per-message receipts.
@Suite("Read state listing and per-message receipts")
struct ReadStateListingTests {
    @Test func listsAtMostOneHundredMostRecentlyAddedFirstWithTheRequesterAlwaysIncluded() throws {
        var s = Scenario()
        let ids = (0..<120).map { "u\($0)" }
        for id in ids { try s.users(id) }
        try s.channel(members: ["u0"])
        for id in ids.dropFirst() { try s.run(.addMembers(cid: Scenario.general, userIDs: [id])) }
        let list = try s.engine.readStates(of: Scenario.general, viewer: "u0")
        #expect(list.count == 100)
        #expect(list.first?.user.id == "u119")
        #expect(list.contains { $0.user.id == "u0" })
        let byRecent = try s.engine.readStates(of: Scenario.general, viewer: "u119")
        #expect(byRecent.map(\.user.id) == (20..<120).reversed().map { "u\($0)" })
    }

    @Test func theViewersOwnStateTakesItsPlaceOrTheLastOneAndANonMemberGetsNone() throws {
        var s = Scenario()
        let ids = (0..<120).map { "u\($0)" }
        for id in ids + ["outsider"] { try s.users(id) }
        try s.channel(members: ["u0"])
        for id in ids.dropFirst() { try s.run(.addMembers(cid: Scenario.general, userIDs: [id])) }
        let channel = try #require(s.engine.channels[Scenario.general])
        let listed = (20..<120).reversed().map { "u\($0)" }
        let listedAs = { (viewer: String) in s.engine.readStateListing(of: channel, viewer: viewer) }
        #expect(listedAs("u119").listed == listed && listedAs("u119").ownPlace == 0)
        #expect(listedAs("u20").ownPlace == 99, "listed last: its own place")
        #expect(listedAs("u5").listed == listed && listedAs("u5").ownPlace == 99, "listed too far back: the last one's place")
        #expect(listedAs("outsider").ownPlace == nil && listedAs("").ownPlace == nil)
    }

    @Test func aChannelRestoredFromRowsInAnotherOrderListsItsMembersMostRecentlyAddedFirst() throws {
        var s = Scenario()
        for id in ["a", "b", "c", "d"] { try s.users(id) }
        try s.channel(members: ["a", "b"])
        try s.run(.addMembers(cid: Scenario.general, userIDs: ["c"]))
        try s.run(.addMembers(cid: Scenario.general, userIDs: ["d"]))
        let expected = try s.engine.readStates(of: Scenario.general, viewer: "a").map(\.user.id)
        #expect(expected == ["d", "c", "b", "a"])
        var snapshot = s.engine.snapshot()
        let index = try #require(snapshot.channels.firstIndex { $0.cid == Scenario.general })
        snapshot.channels[index].memberOrder = ["d", "a", "c", "b"]
        let restored = ReceiptsEngine(restoring: snapshot)
        #expect(try restored.readStates(of: Scenario.general, viewer: "a").map(\.user.id) == expected)
        #expect(restored.channels[Scenario.general]?.memberOrder == ["a", "b", "c", "d"])
    }

    @Test func receiptsGiveTheExactTimeEachPointerFirstPassedTheMessage() throws {
        var s = Scenario()
        try s.users("a", "b", "c")
        try s.run(.updateChannelType(name: "messaging", readEvents: nil, deliveryEvents: true))
        try s.channel(members: ["a", "b", "c"])
        try s.send("a", "m1")
        try s.send("a", "m2")
        try s.run(.markDelivered(userID: "c", latest: [DeliveredTarget(cid: Scenario.general, messageID: "m1")]))
        let deliveredToC = Timestamp(rawValue: s.now)
        try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: "m1"))
        let bReadM1 = Timestamp(rawValue: s.now)
        try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))
        let bReadM2 = Timestamp(rawValue: s.now)

        let m1 = try s.engine.receipts(of: "m1", in: Scenario.general, viewer: "a")
        #expect(m1.readBy.map(\.user.id) == ["b"] && m1.readBy[0].at == bReadM1)
        #expect(m1.deliveredTo.map(\.user.id) == ["c"] && m1.deliveredTo[0].at == deliveredToC)
        #expect(m1.readCount == 1 && m1.deliveredCount == 2)
        let m2 = try s.engine.receipts(of: "m2", in: Scenario.general, viewer: "a")
        #expect(m2.readBy.map(\.at) == [bReadM2])
        #expect(m2.deliveredTo.isEmpty)
    }

    @Test func membersWhoJoinedLaterAreNotListedAsReaders() throws {
        var s = Scenario()
        try s.users("a", "b", "late")
        try s.channel(members: ["a", "b"])
        try s.send("a", "m1")
        try s.run(.addMembers(cid: Scenario.general, userIDs: ["late"]))
        #expect(try s.engine.receipts(of: "m1", in: Scenario.general, viewer: "a").readBy.isEmpty)
        #expect(s.read("late").unreadMessages == 0)
    }
}
