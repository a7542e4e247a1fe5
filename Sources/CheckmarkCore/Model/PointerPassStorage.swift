import Synchronization

/// The append-only buffer ``PointerPasses`` values share, its passes in the same allocation. Its header
/// counts the passes claimed so far; passes `0..<claimed` are written once and never change. Each value
/// reads only the passes it counts, so a value handed to another thread (a commit batch on the writer)
/// reads what was written before it was handed over, while its owner appends beyond them.
///
/// Contract: ``append(_:at:)`` succeeds for exactly one caller per index, the one whose value counts
/// all the claimed passes, and only while there is room; every other caller gets false and copies.
final class PointerPassStorage: ManagedBuffer<Int, PointerPass> {
    /// Storage for at least `capacity` passes holding a copy of `prefix`.
    static func make(capacity: Int, copying prefix: PointerPasses) -> PointerPassStorage {
        precondition(capacity > prefix.count, "pointer pass storage of \(capacity) for \(prefix.count) passes")
        let storage = unsafeDowncast(create(minimumCapacity: capacity) { _ in prefix.count }, to: PointerPassStorage.self)
        storage.withUnsafeMutablePointerToElements { passes in
            for (index, pass) in prefix.enumerated() { (passes + index).initialize(to: pass) }
        }
        return storage
    }

    deinit {
        _ = withUnsafeMutablePointers { claimed, passes in passes.deinitialize(count: claimed.pointee) }
    }

    subscript(index: Int) -> PointerPass {
        withUnsafeMutablePointerToElements { $0[index] }
    }

    /// Writes `pass` at `index` when `index` is the first unclaimed place and fits; otherwise false.
    func append(_ pass: PointerPass, at index: Int) -> Bool {
        guard index < capacity else { return false }
        return withUnsafeMutablePointers { claimed, passes in
            // Two copies holding every claimed pass may append on two threads at once: one wins.
            let won = pointerPassClaims.withLock { _ in
                guard claimed.pointee == index else { return false }
                claimed.pointee = index + 1
                return true
            }
            if won { (passes + index).initialize(to: pass) }
            return won
        }
    }
}

/// Serialises claims on every ``PointerPassStorage``: uncontended in the server, where one engine loop
/// appends.
private let pointerPassClaims = Mutex(())
