import Atomics
import NIOConcurrencyHelpers

/// What a load run's clients share across event loops: the workload, confirmation times, how many
/// clients are ready, and the first errors seen (for the report).
final class LoadShared: Sendable {
    let workload: Workload
    let confirmTimes: ConfirmTimes
    private let ready = ManagedAtomic(0)
    private let closing = ManagedAtomic(false)
    private let notes = NIOLockedValueBox<(errors: [String], errorCount: Int, slow: [Int])>(([], 0, []))

    /// Error texts kept for the report.
    static let keptErrors = 10

    init(workload: Workload) {
        self.workload = workload
        confirmTimes = ConfirmTimes(users: workload.users)
    }

    func clientReady() { ready.wrappingIncrement(ordering: .relaxed) }
    var readyClients: Int { ready.load(ordering: .relaxed) }

    var isClosing: Bool { closing.load(ordering: .relaxed) }
    func beginClosing() { closing.store(true, ordering: .relaxed) }

    func noteError(_ text: String) {
        notes.withLockedValue {
            $0.errorCount += 1
            if $0.errors.count < Self.keptErrors { $0.errors.append(String(text.prefix(300))) }
        }
    }

    func noteSlowDisconnect(user: Int) { notes.withLockedValue { $0.slow.append(user) } }

    var errors: [String] { notes.withLockedValue { $0.errors } }
    var slowDisconnects: Int { notes.withLockedValue { $0.slow.count } }
}
