import CheckmarkCore
import CheckmarkStorage
import NIOCore
import NIOPosix

/// Writes a single node's batches: one transaction per batch, on the writer thread, one at a time.
struct LocalCommitDriver: Sendable {
    let store: any ReceiptsStore
    let writer: NIOThreadPool
    let engineLoop: any EventLoop

    /// Commits `batch`; completes on the engine loop, failing with the store's error (a
    /// ``StorageError`` as a rule) when nothing of it was written.
    func commit(_ batch: CommitBatch) -> EventLoopFuture<Void> {
        let store = self.store
        return writer.runIfActive(eventLoop: engineLoop) { try store.commit(batch) }
    }
}
