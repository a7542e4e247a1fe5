import CheckmarkCore
import NIOCore

/// A store that several Checkmark nodes share. The database keeps every node's commands in one
/// journal of streams (``JournalStream``): a shard's owner appends to its shard's stream beside other
/// owners, any other command goes in alone, each after applying what the others appended before it.
/// So every node's engine applies each stream's commands in the same order, and commands of
/// different shards (which touch different channels) in an order consistent with what each node saw.
/// Calls are blocking and made from one writer thread.
package protocol SharedReceiptsStore: ReceiptsStore {
    /// The largest message ``notifyPeers(_:)`` takes (PostgreSQL's NOTIFY payload is below 8,000 bytes).
    static var maxPeerMessageBytes: Int { get }
    /// Takes the append lock (`exclusively`, or shared with other nodes' commits of shards they own)
    /// and calls `build` with the entries other nodes committed past `applied` (each stream's last
    /// number this node applied, by ``JournalStream/rawValue``; oldest first, commands only), then
    /// writes the batch `build` returns (its entries continue their streams right after those),
    /// commits, releasing the lock, and tells every node when `notifying` (the caller tells them
    /// another way otherwise). A batch of a shared lock holds only
    /// commands of shards its node owns, fenced (``CommitBatch/fence``): no other node commits
    /// their streams meanwhile, and no commit that holds the lock exclusively runs beside it.
    /// - Throws: ``StorageError/commitFailed(reason:)``: nothing of the batch was written; an error
    ///   `build` throws is passed on after rolling back.
    func append(after applied: [Int64], exclusively: Bool, notifying: Bool, _ build: ([JournalEntry]) throws -> CommitBatch) throws
    /// Journal entries past `applied` (each stream's last number this node applied, by
    /// ``JournalStream/rawValue``) without their events, oldest first, at most `limit`: how a node
    /// catches up with what others committed. Each stream's entries come in order and without gaps
    /// (a limit cuts the newest off, never one in the middle of a stream).
    func commands(after applied: [Int64], limit: Int) throws(StorageError) -> [JournalEntry]
    /// Notes `entries`, which another node committed and this node applies without reading them
    /// (they came over a link): what they rewrote is no longer known to be stored as this node
    /// last wrote it.
    func committedElsewhere(_ entries: [JournalEntry])
    /// Starts calling `onAppend` with the newest sequence whenever any node commits, and with 0 after
    /// the notification connection was (re)established, when some notifications may have been missed;
    /// and `onPeerMessage` with every message a node sent with ``notifyPeers(_:)`` (its own included).
    func startListening(onAppend: @escaping @Sendable (Int64) -> Void, onPeerMessage: @escaping @Sendable (String) -> Void)
    /// Sends `messages` (each at most ``maxPeerMessageBytes``) as ``notifyPeers(_:)`` does, at once
    /// and without blocking: on the notification connection, so that they never wait behind a commit
    /// (nil when that connection is down: the caller sends them with ``notifyPeers(_:)``).
    func sendToPeers(_ messages: [String]) -> EventLoopFuture<Void>?
    /// Whether the notification connection is up: messages from other nodes reach this one.
    var isListening: Bool { get }
    /// Sends `message` (at most ``maxPeerMessageBytes``) to every listening node, at once (not
    /// transactional). Messages may be lost while a node's notification connection is down.
    func notifyPeers(_ message: String) throws(StorageError)
    /// After a failure (a commit that failed, a database that stopped answering): connects to the
    /// database afresh and takes commits again. What the node holds in memory may disagree with the
    /// database: the caller reloads it (``ReceiptsStore/load(messageWindow:)``) before committing.
    /// - Throws: ``StorageError/unavailable(reason:)`` while the database cannot be reached,
    ///   ``StorageError/closed`` once the store was closed.
    func reopen() throws(StorageError)
    /// The cluster's shard lease table, on a database session of its own (the one that marks this
    /// node live): one per node.
    func makeShardLeaseStore() -> any ShardLeaseStore
}

extension SharedReceiptsStore {
    /// ``append(after:exclusively:notifying:_:)``, telling every node.
    package func append(after applied: [Int64], exclusively: Bool, _ build: ([JournalEntry]) throws -> CommitBatch) throws {
        try append(after: applied, exclusively: exclusively, notifying: true, build)
    }
}
