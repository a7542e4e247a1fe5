import CheckmarkCore

/// The table of shard leases that a cluster's nodes share: which node owns each shard, at which
/// epoch, until when. Times are the database's own, never a node's: a lease runs out when the
/// database's clock passes its expiry, and a node whose database session ends (a killed process)
/// stops counting as live at once. Calls are blocking.
package protocol ShardLeaseStore: AnyObject, Sendable {
    /// Performs one round for `node` in one statement, extending renewed and claimed leases to
    /// `leaseSeconds` from the database's now, and records `node` as live.
    /// - Throws: ``StorageError/unavailable(reason:)`` when the database cannot be reached or did
    ///   not answer: nothing is known of the round's outcome (leases not renewed run out by themselves).
    func leaseRound(_ round: ShardLeaseRound, node: String, leaseSeconds: Double) throws(StorageError) -> ShardLeaseRoundResult
    /// Ends the session (the node stops counting as live); later rounds throw ``StorageError/closed``.
    func close()
}
