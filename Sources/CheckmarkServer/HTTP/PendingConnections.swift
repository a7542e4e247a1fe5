import Atomics

/// Counts the listener's connections that are still HTTP (not yet WebSocket): a request being read,
/// or keep-alive between requests. Bounded by ``HTTPLimits/maxPendingConnections``.
final class PendingConnections: Sendable {
    let limit: Int
    private let count = ManagedAtomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Takes a place; false (and nothing taken) when all ``limit`` are taken.
    func acquire() -> Bool {
        if count.wrappingIncrementThenLoad(ordering: .relaxed) > limit {
            count.wrappingDecrement(ordering: .relaxed)
            return false
        }
        return true
    }

    func release() { count.wrappingDecrement(ordering: .relaxed) }

    var current: Int { count.load(ordering: .relaxed) }
}
