import Atomics

/// When each user last sent a delivery and a read confirmation (harness clock), readable from every
/// event loop: the author's connection turns it into "confirmation -> author sees it" latency.
package final class ConfirmTimes: Sendable {
    private let delivered: [ManagedAtomic<UInt64>]
    private let read: [ManagedAtomic<UInt64>]

    package init(users: Int) {
        delivered = (0..<users).map { _ in ManagedAtomic(0) }
        read = (0..<users).map { _ in ManagedAtomic(0) }
    }

    package func setDelivered(_ user: Int, _ time: UInt64) { delivered[user].store(time, ordering: .relaxed) }
    package func setRead(_ user: Int, _ time: UInt64) { read[user].store(time, ordering: .relaxed) }

    /// The time, then cleared, so that one confirmation is measured once by its author.
    package func takeDelivered(_ user: Int) -> UInt64 {
        guard user < delivered.count else { return 0 }
        return delivered[user].exchange(0, ordering: .relaxed)
    }

    package func takeRead(_ user: Int) -> UInt64 {
        guard user < read.count else { return 0 }
        return read[user].exchange(0, ordering: .relaxed)
    }
}
