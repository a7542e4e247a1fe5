import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// Connections as dense handles: a slot is reused once its connection closes, under a new serial, and
/// everything the engine keeps of a connection goes with it.
@Suite("Connection handles")
struct ConnectionTableTests {
    @Test func aClosedConnectionsSlotIsReusedUnderANewSerial() throws {
        var s = Scenario()
        try s.users("a", "b")
        try s.channel(members: ["a", "b"])
        try s.connect("a1", as: "a")
        let closed = try #require(s.engine.connections.handle(of: "a1"))
        try s.run(.disconnect(connectionID: "a1"))
        #expect(s.engine.connections.handle(of: "a1") == nil && s.engine.connections.isEmpty)
        try s.connect("b1", as: "b")
        let reused = try #require(s.engine.connections.handle(of: "b1"))
        #expect(reused.slot == closed.slot, "the free slot is taken, the table does not grow")
        #expect(reused.serial != closed.serial, "a handle kept from before tells the two apart")
        #expect(s.engine.connections["b1"] == "b" && s.engine.connections.id(of: reused) == "b1")
    }

    @Test func aClosedConnectionStopsWatchingAndItsIdMayOpenAgain() throws {
        var s = Scenario()
        try s.users("a", "b")
        try s.channel(members: ["a", "b"])
        try s.connect("a1", as: "a")
        #expect(s.engine.connections.watching("a1") == [Scenario.general])
        try s.run(.disconnect(connectionID: "a1"))
        #expect(s.engine.connections.watching("a1").isEmpty && s.engine.channels[Scenario.general]!.watchers.isEmpty)
        try s.connect("a1", as: "a", watching: [])
        let receivers = try s.send("b", "m1").receivers("message.new")
        #expect(receivers.isEmpty, "the reopened connection watches nothing yet: \(receivers)")
        #expect(try s.send("b", "m2").receivers("notification.message_new") == ["a1"])
    }

    /// The engine is public and a replayed trace may say anything: an empty id is refused, not a trap.
    @Test func anEmptyConnectionIdIsRefused() throws {
        var s = Scenario()
        try s.users("a")
        #expect(s.refuse(.connect(connectionID: "", userID: "a")) == .invalidArgument("a connection id may not be empty"))
        #expect(s.engine.connections.isEmpty && !s.engine.isOnline("a"))
    }

    /// A user's list of connections is kept with the user: rewriting the user's profile keeps it.
    @Test func updatingAConnectedUserKeepsTheirConnections() throws {
        var s = Scenario()
        try s.users("a", "b")
        try s.channel(members: ["a", "b"])
        try s.connect("a1", as: "a")
        try s.connect("a2", as: "a", watching: [])
        try s.run(.upsertUser(User(id: "a", name: "Renamed")))
        try s.run(.updateUser(UserPatch(id: "a", set: [("name", .string("Again"))])))
        #expect(s.engine.connectionIDs(of: "a") == ["a1", "a2"] && s.engine.isOnline("a"))
        #expect(try s.send("b", "m1").receivers("notification.message_new") == ["a2"])
        try s.run(.disconnect(connectionID: "a1"))
        try s.run(.disconnect(connectionID: "a2"))
        #expect(!s.engine.isOnline("a"))
    }

    /// Recipients carry the handle the shells deliver by, and the id traces record.
    @Test func recipientsCarryTheirConnectionsHandleAndId() throws {
        var s = Scenario()
        try s.users("a", "b")
        try s.channel(members: ["a", "b"])
        try s.connect("a1", as: "a")
        try s.connect("b1", as: "b")
        let recipients = try s.send("b", "m1").events("message.new").flatMap(\.recipients)
        #expect(recipients.map(\.connectionID) == ["a1", "b1"])
        #expect(recipients.map(\.connection) == ["a1", "b1"].map { s.engine.connections.handle(of: $0)! })
    }
}

/// `max_connections_per_user`, kept by the engine, which holds each user's connections already.
@Suite("Connections per user")
struct ConnectionsPerUserTests {
    @Test func aUserAtTheLimitIsRefusedUntilAConnectionCloses() throws {
        var s = Scenario()
        s.engine.maxConnectionsPerUser = 2
        try s.users("a", "b")
        try s.run(.connect(connectionID: "a1", userID: "a"))
        try s.run(.connect(connectionID: "a2", userID: "a"))
        #expect(s.refuse(.connect(connectionID: "a3", userID: "a")) == .tooManyConnections(user: "a", limit: 2))
        #expect(s.engine.connections["a3"] == nil && s.engine.connectionIDs(of: "a") == ["a1", "a2"])
        try s.run(.connect(connectionID: "b1", userID: "b"))
        try s.run(.disconnect(connectionID: "a1"))
        try s.run(.connect(connectionID: "a3", userID: "a"))
        #expect(s.engine.connectionIDs(of: "a") == ["a2", "a3"])
    }

    @Test func theLimitCanBeAskedBeforeConnecting() throws {
        var s = Scenario()
        s.engine.maxConnectionsPerUser = 1
        try s.users("a")
        #expect(throws: Never.self) { try s.engine.checkConnectionLimit(of: "a") }
        try s.run(.connect(connectionID: "a1", userID: "a"))
        #expect(throws: ReceiptsError.tooManyConnections(user: "a", limit: 1)) { try s.engine.checkConnectionLimit(of: "a") }
    }
}
