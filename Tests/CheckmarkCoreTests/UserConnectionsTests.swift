import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// A user's open connections: kept in the order they opened, whichever closes.
@Suite("A user's open connections")
struct UserConnectionsTests {
    @Test func connectionsKeepTheirOpeningOrderWhicheverCloses() throws {
        var s = Scenario()
        try s.users("a")
        try s.channel(members: ["a"])
        for id in ["c1", "c2", "c3", "c4"] { try s.connect(id, as: "a") }
        #expect(s.engine.connectionIDs(of: "a") == ["c1", "c2", "c3", "c4"])
        try s.run(.disconnect(connectionID: "c1"))
        #expect(s.engine.connectionIDs(of: "a") == ["c2", "c3", "c4"], "the oldest closed: the next is the oldest")
        try s.run(.disconnect(connectionID: "c3"))
        #expect(s.engine.connectionIDs(of: "a") == ["c2", "c4"])
        try s.run(.disconnect(connectionID: "c2"))
        try s.run(.disconnect(connectionID: "c4"))
        #expect(s.engine.connectionIDs(of: "a").isEmpty, "no connection left: the user is offline")
        #expect(!s.engine.isOnline("a"))
        try s.connect("c5", as: "a")
        #expect(s.engine.connectionIDs(of: "a") == ["c5"] && s.engine.isOnline("a"))
    }

    @Test func everyOpenConnectionOfAMemberHearsAMessageOnce() throws {
        var s = Scenario()
        try s.users("a", "b")
        try s.channel(members: ["a", "b"])
        try s.connect("a1", as: "a")
        for id in ["b1", "b2", "b3"] { try s.connect(id, as: "b", watching: []) }
        try s.run(.disconnect(connectionID: "b1"))
        let receivers = try s.send("a", "m1").receivers("notification.message_new")
        #expect(receivers.sorted() == ["b2", "b3"], "\(receivers)")
    }
}
