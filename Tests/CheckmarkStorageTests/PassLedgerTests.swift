@testable import CheckmarkStorage
import CheckmarkCore
import Testing

/// The ledger of stored pointer passes names exactly the passes a commit must append, and asks for a
/// member's rows to be written again when they are not the start of the member's passes.
@Suite("SQLite pass ledger")
struct PassLedgerTests {
    typealias Stored = PassLedger.Stored
    static let cid = ChannelCID(type: "messaging", id: "general")

    static func member(_ userID: String, read: [Int], delivered: [Int]) -> Member {
        var state = ReadState(joinedAt: Timestamp(rawValue: 0), messageCount: 0)
        state.readPasses = PointerPasses(read.map { PointerPass(position: $0, at: Timestamp(rawValue: Int64($0))) })
        state.deliveredPasses = PointerPasses(delivered.map { PointerPass(position: $0, at: Timestamp(rawValue: Int64($0))) })
        return Member(userID: userID, createdAt: Timestamp(rawValue: 0), read: state)
    }

    @Test func onlyThePassesAfterTheStoredOnesAreAppended() {
        var ledger = PassLedger(stored: [
            (Self.cid, "bob", .read, Stored(count: 2, lastPosition: 2)), (Self.cid, "bob", .delivered, Stored(count: 1, lastPosition: 1)),
        ])
        let bob = Self.member("bob", read: [1, 2, 5], delivered: [1, 2, 5])
        #expect(ledger.write(of: bob, in: Self.cid) == .append(read: bob.read.readPasses[2...], delivered: bob.read.deliveredPasses[1...]))
        // Counted as stored from then on: the same member again appends nothing.
        #expect(ledger.write(of: bob, in: Self.cid) == .append(read: bob.read.readPasses[3...], delivered: bob.read.deliveredPasses[3...]))
        #expect(ledger.stored(of: "bob", in: Self.cid) == (Stored(count: 3, lastPosition: 5), Stored(count: 3, lastPosition: 5)))
    }

    @Test func aMemberNeverStoredAppendsEveryPass() {
        var ledger = PassLedger(stored: [])
        let carol = Self.member("carol", read: [4], delivered: [4, 6])
        #expect(ledger.write(of: carol, in: Self.cid) == .append(read: carol.read.readPasses[...], delivered: carol.read.deliveredPasses[...]))
    }

    @Test func aMemberHoldingFewerPassesThanStoredIsRewritten() {
        var ledger = PassLedger(stored: [(Self.cid, "bob", .read, Stored(count: 3, lastPosition: 3))])
        #expect(ledger.write(of: Self.member("bob", read: [1], delivered: [1]), in: Self.cid) == .rewrite)
        #expect(ledger.stored(of: "bob", in: Self.cid) == (Stored(count: 1, lastPosition: 1), Stored(count: 1, lastPosition: 1)))
    }

    /// A member who left and joined again starts with no passes, and its first ones lie beyond every
    /// former position: as many passes as were stored, but not the stored ones.
    @Test func aMemberWhosePassesDoNotStartWithTheStoredOnesIsRewritten() {
        var ledger = PassLedger(stored: [(Self.cid, "bob", .read, Stored(count: 2, lastPosition: 3))])
        #expect(ledger.write(of: Self.member("bob", read: [7, 8, 9], delivered: [7, 8, 9]), in: Self.cid) == .rewrite)
    }

    @Test func membersNoLongerInARewrittenChannelAreForgottenAndNamed() {
        var ledger = PassLedger(stored: [
            (Self.cid, "bob", .read, Stored(count: 3, lastPosition: 3)), (Self.cid, "alice", .read, Stored(count: 1, lastPosition: 1)),
            (Self.cid, "dan", .delivered, Stored(count: 1, lastPosition: 1)),
        ])
        var channel = Channel(cid: Self.cid, createdBy: nil, createdAt: Timestamp(rawValue: 0))
        channel.members["alice"] = Self.member("alice", read: [1, 2], delivered: [1, 2])
        channel.memberOrder = ["alice"]
        #expect(ledger.forgetFormerMembers(of: channel) == ["bob", "dan"])
        #expect(ledger.stored(of: "bob", in: Self.cid) == (Stored.none, Stored.none))
        #expect(ledger.stored(of: "alice", in: Self.cid) == (Stored(count: 1, lastPosition: 1), Stored.none))
    }

    @Test func aLedgerOfTheLoadedStateHoldsEveryMembersLastPasses() {
        var channel = Channel(cid: Self.cid, createdBy: nil, createdAt: Timestamp(rawValue: 0))
        channel.members["alice"] = Self.member("alice", read: [1, 4], delivered: [1, 4, 6])
        channel.members["erin"] = Self.member("erin", read: [], delivered: [])
        channel.memberOrder = ["alice", "erin"]
        let ledger = PassLedger(loaded: [channel])
        #expect(ledger.stored(of: "alice", in: Self.cid) == (Stored(count: 2, lastPosition: 4), Stored(count: 3, lastPosition: 6)))
        #expect(ledger.stored(of: "erin", in: Self.cid) == (Stored.none, Stored.none))
    }
}
