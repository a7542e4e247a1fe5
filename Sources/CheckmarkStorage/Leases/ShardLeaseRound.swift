import CheckmarkCore

/// What one node asks of the shard table in one round (one statement): renew the leases it holds,
/// give back the shards it drained, and take up to ``claim`` shards that are free, expired, or held
/// by a node whose database session is gone.
package struct ShardLeaseRound: Sendable, Equatable {
    /// Leases to extend, each at the epoch this node holds it at; one whose epoch moved on (another
    /// node took the shard) is not extended, and is missing from the result's ``ShardLeaseRoundResult/renewed``.
    package var renew: [ShardID: Int64]
    /// Drained shards to give back (at the epoch held): free for any node afterwards.
    package var release: [ShardID: Int64]
    /// At most this many shards to take.
    package var claim: Int

    package init(renew: [ShardID: Int64] = [:], release: [ShardID: Int64] = [:], claim: Int = 0) {
        self.renew = renew
        self.release = release
        self.claim = claim
    }
}
