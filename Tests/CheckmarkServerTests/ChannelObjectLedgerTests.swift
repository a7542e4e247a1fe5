import CheckmarkCore
@testable import CheckmarkServer
import CheckmarkStorage
import Testing

/// The keys journaled events get for their channel objects: the same bytes share a key, a change gets
/// the event's own sequence, and keys never go back within a channel (what retention relies on).
@Suite("Journal: channel object keys")
struct ChannelObjectLedgerTests {
    static let general = ChannelCID(type: "messaging", id: "general")
    static let random = ChannelCID(type: "messaging", id: "random")
    static func object(_ members: Int) -> ArraySlice<UInt8> { Array(#"{"id":"general","member_count":\#(members)}"#.utf8)[...] }

    @Test func theSameBytesShareTheFirstEventsKeyAndAChangeTakesItsOwn() {
        var ledger = ChannelObjectLedger()
        #expect(ledger.key(for: Self.object(3), of: Self.general, at: 4) == 4)
        #expect(ledger.key(for: Self.object(3), of: Self.general, at: 6) == 4)
        #expect(ledger.key(for: Self.object(4), of: Self.general, at: 9) == 9)
        // Back to the first bytes: a new key, never the older one.
        #expect(ledger.key(for: Self.object(3), of: Self.general, at: 12) == 12)
        #expect(ledger.key(for: Self.object(3), of: Self.random, at: 2) == 2, "channels are keyed apart")
        #expect(ledger.key(for: Self.object(3), of: Self.general, at: 13) == 12)
    }

    @Test func keysNeverGoBackWhateverTheObjectsAndTheFill() {
        var ledger = ChannelObjectLedger()
        var random = SplitMix64(seed: 45)
        var last: [ChannelCID: Int64] = [:]
        let cids = (0..<40).map { ChannelCID(type: "messaging", id: "c\($0)") }
        for seq in Int64(1)...20_000 {
            let cid = cids[Int(random.next() % UInt64(cids.count))]
            let key = ledger.key(for: Self.object(Int(random.next() % 3)), of: cid, at: seq)
            #expect(key <= seq && key >= (last[cid] ?? 0))
            last[cid] = key
        }
    }

    @Test func anObjectLargerThanTheLimitIsItsEventsOwn() {
        var ledger = ChannelObjectLedger()
        let large = Array(repeating: UInt8(ascii: "x"), count: ChannelObjectLedger.maxObjectBytes + 1)[...]
        #expect(ledger.key(for: large, of: Self.general, at: 1) == 1)
        #expect(ledger.key(for: large, of: Self.general, at: 2) == 2)
        #expect(ledger.keptChannels == 0)
    }

    @Test func moreChannelsThanItHoldsEmptyItFirst() {
        var ledger = ChannelObjectLedger()
        for index in 0..<(ChannelObjectLedger.capacity + 10) {
            _ = ledger.key(for: Self.object(1), of: ChannelCID(type: "messaging", id: "c\(index)"), at: 1)
        }
        #expect(ledger.keptChannels == 10)
    }

    /// A channel another node wrote to is forgotten: its next object on this node takes a new key,
    /// past whatever key the other node used.
    @Test func aChannelAnotherNodeWroteToTakesANewKey() {
        var ledger = ChannelObjectLedger()
        #expect(ledger.key(for: Self.object(3), of: Self.general, at: 4) == 4)
        #expect(ledger.key(for: Self.object(3), of: Self.random, at: 2) == 2)
        ledger.forget([Self.general])
        #expect(ledger.key(for: Self.object(3), of: Self.general, at: 9) == 9)
        #expect(ledger.key(for: Self.object(3), of: Self.random, at: 3) == 2, "other channels keep theirs")
    }
}
