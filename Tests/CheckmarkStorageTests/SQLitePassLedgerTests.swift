@testable import CheckmarkStorage
import CheckmarkCore
import Testing

/// The ledger of stored pointer passes names exactly the passes a commit must append, and asks for a
/// member's rows to be written again when the member holds fewer passes than are stored.
@Suite("SQLite pass ledger")
struct SQLitePassLedgerTests {
    static let cid = ChannelCID(type: "messaging", id: "general")

    static func member(_ userID: String, read: [Int], delivered: [Int]) -> Member {
        var state = ReadState(joinedAt: Timestamp(rawValue: 0), messageCount: 0)
        state.readPasses = read.map { PointerPass(position: $0, at: Timestamp(rawValue: Int64($0))) }
        state.deliveredPasses = delivered.map { PointerPass(position: $0, at: Timestamp(rawValue: Int64($0))) }
        return Member(userID: userID, createdAt: Timestamp(rawValue: 0), read: state)
    }

    @Test func onlyThePassesAfterTheStoredOnesAreAppended() {
        var ledger = SQLitePassLedger(storedCounts: [(Self.cid, "bob", .read, 2), (Self.cid, "bob", .delivered, 1)])
        let bob = Self.member("bob", read: [1, 2, 5], delivered: [1, 2, 5])
        #expect(ledger.write(of: bob, in: Self.cid) == .append(read: bob.read.readPasses[2...], delivered: bob.read.deliveredPasses[1...]))
        // Counted as stored from then on: the same member again appends nothing.
        #expect(ledger.write(of: bob, in: Self.cid) == .append(read: bob.read.readPasses[3...], delivered: bob.read.deliveredPasses[3...]))
        #expect(ledger.storedCount(of: "bob", in: Self.cid) == (3, 3))
    }

    @Test func aMemberNeverStoredAppendsEveryPass() {
        var ledger = SQLitePassLedger(storedCounts: [])
        let carol = Self.member("carol", read: [4], delivered: [4, 6])
        #expect(ledger.write(of: carol, in: Self.cid) == .append(read: carol.read.readPasses[...], delivered: carol.read.deliveredPasses[...]))
    }

    @Test func aMemberHoldingFewerPassesThanStoredIsRewritten() {
        var ledger = SQLitePassLedger(storedCounts: [(Self.cid, "bob", .read, 3)])
        #expect(ledger.write(of: Self.member("bob", read: [1], delivered: [1]), in: Self.cid) == .rewrite)
        #expect(ledger.storedCount(of: "bob", in: Self.cid) == (1, 1))
    }

    @Test func aRewrittenChannelForgetsMembersNoLongerInIt() {
        var ledger = SQLitePassLedger(storedCounts: [(Self.cid, "bob", .read, 3), (Self.cid, "alice", .read, 1)])
        var channel = Channel(cid: Self.cid, createdBy: nil, createdAt: Timestamp(rawValue: 0))
        channel.members["alice"] = Self.member("alice", read: [1, 2], delivered: [1, 2])
        channel.memberOrder = ["alice"]
        ledger.rewrote(channel)
        #expect(ledger.storedCount(of: "alice", in: Self.cid) == (2, 2))
        #expect(ledger.storedCount(of: "bob", in: Self.cid) == (0, 0))
    }
}
