@testable import CheckmarkServer
import CheckmarkCore
import Testing

/// The gateway's admission of connections: the server-wide total, and each user's connections
/// registering counted with their open ones against the engine's limit per user.
@Suite("Connection admission")
struct ConnectionCounterTests {
    @Test func aUsersRegistrationsCountAgainstItsLimitUntilTheyEnd() throws {
        var engine = ReceiptsEngine()
        engine.maxConnectionsPerUser = 2
        _ = engine.apply(.upsertUser(User(id: "a")), at: Timestamp(rawValue: 1))
        _ = engine.apply(.connect(connectionID: "a1", userID: "a"), at: Timestamp(rawValue: 2))
        let counter = ConnectionCounter(limits: GatewayLimits(maxConnectionsPerUser: 2))
        try counter.admitRegistration(of: "a", connectionID: "a2", in: engine)
        #expect(throws: ReceiptsError.tooManyConnections(user: "a", limit: 2)) {
            try counter.admitRegistration(of: "a", connectionID: "a3", in: engine)
        }
        #expect(counter.registrations == 1, "a refused connection is not registering")
        counter.endRegistration(of: "a", connectionID: "a2")
        #expect(counter.registrations == 0)
        try counter.admitRegistration(of: "a", connectionID: "a3", in: engine)
        counter.endRegistration(of: "a", connectionID: "a3")
    }

    /// Regression (soak, "WS user past 64 connections": one of the 64 held connections was closed
    /// 4003): a connection the engine had opened was counted twice, open and still registering,
    /// until its registration ended, so the user's next connection within the limit was refused.
    @Test func aRegistrationTheEngineHasOpenedIsCountedOnce() throws {
        var engine = ReceiptsEngine()
        engine.maxConnectionsPerUser = 2
        _ = engine.apply(.upsertUser(User(id: "a")), at: Timestamp(rawValue: 1))
        let counter = ConnectionCounter(limits: GatewayLimits(maxConnectionsPerUser: 2))
        try counter.admitRegistration(of: "a", connectionID: "a1", in: engine)
        _ = engine.apply(.connect(connectionID: "a1", userID: "a"), at: Timestamp(rawValue: 2))
        try counter.admitRegistration(of: "a", connectionID: "a2", in: engine)
        #expect(throws: ReceiptsError.tooManyConnections(user: "a", limit: 2)) {
            try counter.admitRegistration(of: "a", connectionID: "a3", in: engine)
        }
        counter.endRegistration(of: "a", connectionID: "a1")
        counter.endRegistration(of: "a", connectionID: "a2")
        #expect(counter.registrations == 0)
    }

    @Test func theTotalIsRefusedPastMaxConnectionsAndFreedOnRelease() {
        let counter = ConnectionCounter(limits: GatewayLimits(maxConnections: 1))
        #expect(counter.acquire() == nil)
        #expect(counter.acquire() == "the server has 1 connections, its limit")
        counter.release()
        #expect(counter.acquire() == nil && counter.total == 1)
    }
}
