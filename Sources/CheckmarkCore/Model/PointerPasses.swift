/// A member's pointer passes of one kind, oldest first: a value with the semantics of an array of
/// ``PointerPass``, made for a history that only grows.
///
/// Copies share their passes. Appending to the copy that holds the most passes of its storage (the
/// engine's, while a commit batch holds an earlier copy) writes one pass and copies none, so a
/// confirmation costs the same however long the member's history is; appending to any other copy
/// first copies its own passes into storage of its own, as an array would.
///
/// Sendable as an array is: the storage (a `ManagedBuffer`, which the standard library does not mark
/// `Sendable`) is read only below each value's count and claimed under a lock (``PointerPassStorage``).
public struct PointerPasses: @unchecked Sendable, Hashable, RandomAccessCollection, ExpressibleByArrayLiteral, CustomStringConvertible {
    private var storage: PointerPassStorage?
    public let startIndex = 0
    /// The number of passes.
    public private(set) var endIndex = 0

    public init() {}

    public init(_ passes: some Sequence<PointerPass>) {
        for pass in passes { append(pass) }
    }

    public init(arrayLiteral passes: PointerPass...) {
        self.init(passes)
    }

    public subscript(index: Int) -> PointerPass {
        precondition(index >= 0 && index < endIndex, "pointer pass \(index) of \(endIndex)")
        return storage.unsafelyUnwrapped[index]
    }

    /// Adds `pass` after the last one.
    public mutating func append(_ pass: PointerPass) {
        if let storage, storage.append(pass, at: endIndex) {
            endIndex += 1
            return
        }
        let grown = PointerPassStorage.make(capacity: Swift.max(4, endIndex * 2), copying: self)
        _ = grown.append(pass, at: endIndex)
        storage = grown
        endIndex += 1
    }

    /// Records a pass if it reaches further than any before.
    mutating func record(position: Int, at time: Timestamp) {
        if let last = last, last.position >= position { return }
        append(PointerPass(position: position, at: time))
    }

    /// When the pointer first passed the message at `index`, or nil if it never did.
    func firstPass(over index: Int) -> Timestamp? {
        // First entry with position > index (binary search: positions increase).
        var low = 0
        var high = endIndex
        while low < high {
            let mid = (low + high) / 2
            if self[mid].position > index { high = mid } else { low = mid + 1 }
        }
        return low < endIndex ? self[low].at : nil
    }

    /// Whether `other` reads the same storage (it is a copy of this value or of one it came from).
    func sharesStorage(with other: PointerPasses) -> Bool { storage != nil && storage === other.storage }

    public static func == (lhs: PointerPasses, rhs: PointerPasses) -> Bool {
        lhs.endIndex == rhs.endIndex && (lhs.storage === rhs.storage || lhs.elementsEqual(rhs))
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(endIndex)
        for pass in self { hasher.combine(pass) }
    }

    public var description: String { Array(self).description }
}
