@testable import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// A member's pass history as a value: copies never see each other's later passes, and the copy that
/// holds the newest pass appends without copying the ones before it, whatever copies exist.
@Suite("Pointer pass histories")
struct PointerPassesTests {
    static func pass(_ position: Int) -> PointerPass {
        PointerPass(position: position, at: Timestamp(rawValue: Int64(position) * 10))
    }

    @Test func appendingWhileAnEarlierCopyIsHeldCopiesNoPass() {
        var passes = PointerPasses((1...100).map(Self.pass))
        let held = passes
        passes.append(Self.pass(101))
        #expect(passes.sharesStorage(with: held), "the newest copy appends in place")
        #expect(held.count == 100 && Array(held) == (1...100).map(Self.pass))
        #expect(passes.count == 101 && passes.last == Self.pass(101))
    }

    @Test func anOlderCopyThatAppendsGetsPassesOfItsOwn() {
        var newest = PointerPasses([Self.pass(1), Self.pass(2)])
        var older = newest
        newest.append(Self.pass(3))
        older.append(Self.pass(7))
        #expect(!older.sharesStorage(with: newest))
        #expect(Array(newest) == [Self.pass(1), Self.pass(2), Self.pass(3)])
        #expect(Array(older) == [Self.pass(1), Self.pass(2), Self.pass(7)])
        newest.append(Self.pass(4))
        #expect(Array(newest) == [1, 2, 3, 4].map(Self.pass) && older.count == 3)
    }

    @Test func copiesAppendingOnTwoThreadsAtOnceEachKeepTheirOwnPass() async {
        for _ in 0..<200 {
            let base = PointerPasses([Self.pass(1)])
            let appended = await withTaskGroup(of: (Int, PointerPasses).self) { group in
                for position in [2, 3] {
                    group.addTask {
                        var copy = base
                        copy.append(Self.pass(position))
                        return (position, copy)
                    }
                }
                var results: [Int: PointerPasses] = [:]
                for await (position, copy) in group { results[position] = copy }
                return results
            }
            #expect(appended[2].map(Array.init) == [Self.pass(1), Self.pass(2)])
            #expect(appended[3].map(Array.init) == [Self.pass(1), Self.pass(3)])
            #expect(Array(base) == [Self.pass(1)])
        }
    }

    @Test func everyCopyKeepsItsOwnPrefixAcrossGrowth() {
        var passes = PointerPasses()
        var copies: [PointerPasses] = []
        for position in 1...1_000 {
            copies.append(passes)
            passes.append(Self.pass(position))
        }
        for (count, copy) in copies.enumerated() {
            #expect(copy.count == count)
            #expect(copy.last?.position == (count == 0 ? nil : count))
        }
        #expect(Array(passes) == (1...1_000).map(Self.pass))
    }

    @Test func equalAndHashedByTheirPassesAlone() {
        let built = PointerPasses([Self.pass(1), Self.pass(2)])
        var grown = PointerPasses([Self.pass(1), Self.pass(2), Self.pass(3)])
        let shorter = PointerPasses([Self.pass(1)])
        grown = PointerPasses(grown.prefix(2))
        #expect(built == grown && built.hashValue == grown.hashValue)
        #expect(built != shorter && PointerPasses() == [])
    }

    @Test func aFirstPassIsFoundByPosition() {
        let passes = PointerPasses([Self.pass(2), Self.pass(5), Self.pass(9)])
        #expect(passes.firstPass(over: 0) == Timestamp(rawValue: 20))
        #expect(passes.firstPass(over: 2) == Timestamp(rawValue: 50))
        #expect(passes.firstPass(over: 8) == Timestamp(rawValue: 90))
        #expect(passes.firstPass(over: 9) == nil)
    }

    /// The commit batch holds a copy of each member it writes; before the passes were shared, the
    /// engine's next pass copied the member's whole history, so a confirmation cost grew with it.
    @Test func aConfirmationWhileTheBatchHoldsTheMemberCopiesNoHistory() throws {
        var s = Scenario()
        try s.users("a", "b")
        try s.channel(members: ["a", "b"])
        for n in 1...3 { try s.send("a", "m\(n)") }
        try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: "m1"))
        let held = s.read("b")
        try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: "m2"))
        let after = s.read("b")
        #expect(after.readPasses.count == held.readPasses.count + 1)
        #expect(after.readPasses.sharesStorage(with: held.readPasses))
        #expect(held.readPasses.count == 1 && held.readPasses.last?.position == 1)
    }
}
