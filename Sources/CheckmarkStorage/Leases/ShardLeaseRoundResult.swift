import CheckmarkCore

/// What the shard table answered to a ``ShardLeaseRound``.
package struct ShardLeaseRoundResult: Sendable, Equatable {
    /// The asked-for renewals that held: this node still owns these shards at the epochs it asked with.
    package var renewed: Set<ShardID>
    /// Shards taken in this round, each at its new epoch (one past the last owner's).
    package var claimed: [ShardID: Int64]
    /// Live nodes, this one included: what an even share of the shards is computed from.
    package var liveNodes: Int
    /// The shards other live nodes hold under unexpired leases, with their owners, as the round began.
    package var owners: [ShardID: String]

    package init(renewed: Set<ShardID> = [], claimed: [ShardID: Int64] = [:], liveNodes: Int = 1, owners: [ShardID: String] = [:]) {
        self.renewed = renewed
        self.claimed = claimed
        self.liveNodes = liveNodes
        self.owners = owners
    }
}
