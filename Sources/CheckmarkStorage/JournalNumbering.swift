/// How a node numbers the journal entries and events it commits (their global `seq`s), so that nodes
/// committing at the same time never give two rows one number and every number is past what its
/// node had seen. Each committing connection holds a slot of its own (`slot < stride`), and numbers
/// in its slot's residue: the next number is the first past the greatest one seen that is `slot`
/// modulo `stride`. An entry committed after another entry was seen has the greater number, so
/// sorting by number keeps what one node saw before the next. One node alone numbers 1, 2, 3, ...
package struct JournalNumbering: Sendable, Hashable {
    /// How many slots there are: numbers advance by up to this much.
    package let stride: Int64
    /// This node's slot: every number it gives is this modulo ``stride``.
    package let slot: Int64

    /// One node alone: every number, one after another.
    package static let alone = JournalNumbering(stride: 1, slot: 0)

    package init(stride: Int64, slot: Int64) {
        precondition(stride > 0 && (0..<stride).contains(slot), "a slot below the stride")
        self.stride = stride
        self.slot = slot
    }

    /// The first number past `seen` in this node's slot.
    package func next(after seen: Int64) -> Int64 {
        let base = seen - seen % stride + slot
        return base > seen ? base : base + stride
    }

    /// Whether this node gives `seq` (it is in its slot).
    package func gives(_ seq: Int64) -> Bool {
        seq % stride == slot
    }
}
