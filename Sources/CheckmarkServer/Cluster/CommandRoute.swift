import CheckmarkCore

/// Where a command is applied in a cluster.
enum CommandRoute: Equatable {
    /// A connection's own (connect, disconnect, watch, stop watching): on the node holding the connection.
    case connection
    /// One channel's, or several channels' of one shard: on the node that owns the shard.
    case owner(ShardID)
    /// Users, channel types, and commands over channels of several shards (or all of a user's): on
    /// whichever node it reaches.
    case anyNode

    init(_ command: ReceiptsCommand) {
        switch command {
        case .connect, .disconnect, .watch, .stopWatching:
            self = .connection
        case .upsertUser, .updateUser, .createChannelType, .updateChannelType:
            self = .anyNode
        case .createChannel(let cid, _, _), .addMembers(let cid, _), .removeMembers(let cid, _), .sendMessage(let cid, _, _),
             .updateMessage(let cid, _, _, _), .deleteMessage(let cid, _, _, _), .sendReaction(let cid, _, _, _, _, _),
             .deleteReaction(let cid, _, _, _), .markRead(let cid, _, _), .markThreadRead(let cid, _, _),
             .markUnread(let cid, _, _):
            self = .owner(ShardMap.shard(of: cid))
        case .markReadMany(_, let targets):
            self = Self.one(targets?.map(\.cid) ?? [])
        case .markDelivered(_, let latest):
            self = Self.one(latest.map(\.cid))
        }
    }

    /// The journal stream a command of this route is numbered in: its shard's, or the cluster's
    /// (connections' commands are never journaled).
    var stream: JournalStream {
        switch self {
        case .owner(let shard): JournalStream(shard)
        case .connection, .anyNode: .cluster
        }
    }

    /// The owner of `cids`' shard when they all share one; any node otherwise (none, or several).
    private static func one(_ cids: [ChannelCID]) -> CommandRoute {
        let shards = Set(cids.map(ShardMap.shard(of:)))
        guard shards.count == 1, let shard = shards.first else { return .anyNode }
        return .owner(shard)
    }
}
