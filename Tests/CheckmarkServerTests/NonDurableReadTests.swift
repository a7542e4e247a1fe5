import CheckmarkCore
@testable import CheckmarkServer
import CheckmarkStorage
import Foundation
import CoreMetrics
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// The real SQLite store whose next commit can be held and then failed: storage failing under a
/// command, as a full disk does, at a moment the test chooses.
final class FailingCommitStore: SQLiteStoreWrapper, @unchecked Sendable {
    let store: SQLiteStore
    private let armed = NIOLockedValueBox(false)
    private let gate = DispatchSemaphore(value: 0)

    init(_ store: SQLiteStore) { self.store = store }

    /// The next commit waits for ``release()`` and then fails.
    func armFailure() { armed.withLockedValue { $0 = true } }
    func release() { gate.signal() }

    func commit(_ batch: CommitBatch) throws(StorageError) {
        if armed.withLockedValue({ $0 }) {
            gate.wait()
            throw .commitFailed(reason: "disk full (injected)")
        }
        try store.commit(batch)
    }
}

/// Issue 18: "a read answered while a commit is failing returned a message that was never durable.
/// Nothing not durable may be served."
@Suite("Service: nothing not durable is served")
struct NonDurableReadTests {
    @Test func readQueuedBehindAFailingCommitFailsInsteadOfServingTheMessage() async throws {
        let directory = NSTemporaryDirectory() + "checkmark-nondurable-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = FailingCommitStore(try SQLiteStore(directory: try DataDirectory(path: directory)))
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        var logger = Logger(label: "checkmark-test")
        logger.logLevel = .critical
        let service = try await ReceiptsService.start(store: store, engineLoop: loop, metrics: ServiceMetrics(factory: NOOPMetricsHandler.instance), logger: logger)
        let general = ChannelCID(type: "messaging", id: "general")
        _ = try await service.submit(.upsertUser(User(id: "ann"))).get()
        _ = try await service.submit(.createChannel(cid: general, createdBy: "ann", members: ["ann"])).get()

        store.armFailure()
        let send = service.submit(.sendMessage(cid: general, userID: "ann", draft: MessageDraft(id: "never-durable", text: "x")))
        let read = service.read { engine in !(try engine.channels(holdingMessage: "never-durable")).isEmpty }
        store.release()
        await #expect(throws: (any Error).self) { try await send.get() }
        await #expect(throws: (any Error).self, "the read saw the message, which never became durable") {
            _ = try await read.get()
        }
        // And later reads are refused too: the engine still holds what failed.
        await #expect(throws: (any Error).self) { _ = try await service.read { $0.channels.count }.get() }
        store.close()
    }
}
