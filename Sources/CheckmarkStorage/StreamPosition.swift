import CheckmarkCore

/// Where a journal entry is in its stream (``JournalStream``): the stream, and the entry's number
/// there. A node applies each stream's entries in order and without gaps, so what it had applied at
/// some moment is one number per stream, and whether it applied an entry after that moment follows.
package struct StreamPosition: Sendable, Hashable {
    package var stream: JournalStream
    package var number: Int64

    package init(stream: JournalStream, number: Int64) {
        self.stream = stream
        self.number = number
    }

    /// Whether a node that had applied `applied` (each stream's last number, by
    /// ``JournalStream/rawValue``) at some moment applied this entry after that moment; false when
    /// `applied` names no number for the stream (an empty list: nothing is known to be after it).
    package func isApplied(after applied: [Int64]) -> Bool {
        stream.rawValue < applied.count && number > applied[stream.rawValue]
    }
}
