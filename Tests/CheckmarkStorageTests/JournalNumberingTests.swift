import CheckmarkStorage
import Testing

/// Issue 45: nodes committing side by side number their entries and events apart, each past what it saw.
@Suite("Journal numbering: slots keep side-by-side commits apart")
struct JournalNumberingTests {
    @Test func oneNodeAloneNumbersOneAfterAnother() {
        let alone = JournalNumbering.alone
        #expect(alone.next(after: 0) == 1 && alone.next(after: 41) == 42)
        #expect(alone.gives(7))
    }

    @Test func aSlotsNumbersAreItsResidueAndPastWhatItSaw() {
        let slot3 = JournalNumbering(stride: 1024, slot: 3)
        #expect(slot3.next(after: 0) == 3)
        #expect(slot3.next(after: 3) == 1027)
        #expect(slot3.next(after: 1000) == 1027)
        #expect(slot3.next(after: 1027) == 2051)
        #expect(slot3.gives(2051) && !slot3.gives(2050))
    }

    @Test func twoSlotsNeverGiveOneNumberWhateverEachSaw() {
        let a = JournalNumbering(stride: 1024, slot: 0), b = JournalNumbering(stride: 1024, slot: 1)
        var seenA: Int64 = 0, seenB: Int64 = 0
        var given: Set<Int64> = []
        for round in 0..<500 {
            seenA = a.next(after: seenA)
            seenB = b.next(after: seenB)
            #expect(given.insert(seenA).inserted && given.insert(seenB).inserted)
            // Now and then each sees the other's last: its next number is past it.
            if round % 7 == 0 { seenA = max(seenA, seenB) }
            if round % 11 == 0 { seenB = max(seenB, seenA) }
            #expect(a.next(after: max(seenA, seenB)) > max(seenA, seenB))
        }
    }
}
