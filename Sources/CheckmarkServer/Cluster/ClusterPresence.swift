import CheckmarkCore
import NIOCore

/// Which users watch which channels on the other nodes of a cluster, as those nodes last said
/// (``PeerMessage/presence(from:cid:users:)``), so that `watcher_count` counts the whole cluster's
/// watchers and not only one node's. A node that has not been heard of for ``silenceLimit`` (every
/// node says it is alive each ``ReceiptsService/clusterPollInterval``) is taken for gone: its watchers
/// no longer count.
struct ClusterPresence {
    static let silenceLimit = TimeAmount.seconds(3)

    private struct Node {
        var lastHeard: NIODeadline
        var watching: [ChannelCID: Set<String>] = [:]
    }

    private var nodes: [String: Node] = [:]

    /// `node` is alive at `now`.
    mutating func heard(_ node: String, at now: NIODeadline) {
        nodes[node, default: Node(lastHeard: now)].lastHeard = now
    }

    /// `node` now has exactly `users` watching `cid`.
    mutating func update(_ node: String, cid: ChannelCID, users: Set<String>, at now: NIODeadline) {
        heard(node, at: now)
        nodes[node]!.watching[cid] = users.isEmpty ? nil : users
    }

    /// The other nodes heard of within ``silenceLimit`` of `now`; nodes silent longer are forgotten.
    mutating func liveNodes(at now: NIODeadline) -> [String] {
        nodes = nodes.filter { now - $0.value.lastHeard <= Self.silenceLimit }
        return Array(nodes.keys)
    }

    /// The users watching `cid` on nodes heard of within ``silenceLimit`` of `now`; nodes silent
    /// longer are forgotten.
    mutating func watchingUsers(of cid: ChannelCID, at now: NIODeadline) -> Set<String> {
        nodes = nodes.filter { now - $0.value.lastHeard <= Self.silenceLimit }
        var users = Set<String>()
        for node in nodes.values { if let watching = node.watching[cid] { users.formUnion(watching) } }
        return users
    }
}
