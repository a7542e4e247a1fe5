/// The moment a member's pointer first reached past a position in the channel's message list.
/// A member's passes form a high-water history: positions and times both strictly increase.
public struct PointerPass: Sendable, Hashable {
    /// Messages `0..<position` were passed.
    public var position: Int
    public var at: Timestamp

    public init(position: Int, at: Timestamp) {
        self.position = position
        self.at = at
    }
}

extension [PointerPass] {
    /// Records a pass if it reaches further than any before.
    mutating func record(position: Int, at time: Timestamp) {
        if let last = last, last.position >= position { return }
        append(PointerPass(position: position, at: time))
    }

    /// When the pointer first passed the message at `index`, or nil if it never did.
    func firstPass(over index: Int) -> Timestamp? {
        // First entry with position > index (binary search: positions increase).
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid].position > index { high = mid } else { low = mid + 1 }
        }
        return low < count ? self[low].at : nil
    }
}
