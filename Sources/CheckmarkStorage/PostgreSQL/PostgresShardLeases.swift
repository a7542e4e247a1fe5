import CheckmarkCore
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// The shard leases of a cluster in PostgreSQL (`shards`, `cluster_nodes`; migration v11), on a
/// connection of their own: that connection's session is what marks this node live, so that when
/// the process dies (its socket closes) the other nodes take its shards at their next round, without
/// waiting for its leases to run out. A node is live while its last round is younger than a lease and
/// its session is still open (or began before the database last started: a restarted database
/// forgets every session, and nodes are given a lease's time to come back). A failed round closes the
/// connection; the next round opens another.
package final class PostgresShardLeases: ShardLeaseStore {
    package let location: PostgresLocation
    private let group: MultiThreadedEventLoopGroup
    private let logger: Logger
    private let connection = Mutex<PostgresConnection?>(nil)
    private let closed = Mutex(false)

    /// Opens nothing yet: the first round connects.
    package init(location: PostgresLocation, logger: Logger) {
        self.location = location
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    deinit { close() }

    package func close() {
        let wasOpen = closed.withLock { done in
            defer { done = true }
            return !done
        }
        guard wasOpen else { return }
        let open = connection.withLock { current in
            defer { current = nil }
            return current
        }
        try? open?.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// The statement of a round. Every part runs in one snapshot, so the candidates for claiming
    /// exclude the shards this round renews or releases; `FOR UPDATE SKIP LOCKED` keeps two nodes
    /// claiming at once from taking the same shard (a row another round holds is left for later, and
    /// one it changed is checked again against the conditions). A node is dead when its last round
    /// is older than a lease, or when its session is gone and its last round older than
    /// ``sessionGraceFraction`` of a lease (a node reconnecting its session is not dead); an owner
    /// the snapshot does not know yet (a node that has just started) is alive. Renewals lock their
    /// rows in shard order, as a commit's fence does, so that the two never deadlock.
    static let roundSQL = """
        WITH me AS (
            INSERT INTO cluster_nodes (node_id, backend_pid, seen_at) VALUES ($1, pg_backend_pid(), now())
            ON CONFLICT (node_id) DO UPDATE SET backend_pid = excluded.backend_pid, seen_at = excluded.seen_at
            RETURNING 1),
        others AS (
            SELECT n.node_id FROM cluster_nodes AS n
            WHERE n.node_id <> $1 AND n.seen_at > now() - make_interval(secs => $2)
              AND (n.seen_at < pg_postmaster_start_time() OR n.seen_at > now() - make_interval(secs => $2 * \(sessionGraceFraction))
                   OR EXISTS (SELECT 1 FROM pg_stat_activity AS a WHERE a.pid = n.backend_pid))),
        dead AS (
            SELECT node_id FROM cluster_nodes WHERE node_id <> $1 AND node_id NOT IN (SELECT node_id FROM others)),
        renewed AS (
            UPDATE shards SET expires_at = now() + make_interval(secs => $2)
            WHERE shard IN (
                SELECT s.shard FROM shards AS s JOIN unnest($3::int[], $4::bigint[]) AS r(shard, epoch)
                    ON s.shard = r.shard AND s.epoch = r.epoch
                WHERE s.owner = $1 ORDER BY s.shard FOR UPDATE OF s)
            RETURNING shards.shard),
        released AS (
            UPDATE shards SET owner = NULL, expires_at = NULL
            FROM unnest($5::int[], $6::bigint[]) AS r(shard, epoch)
            WHERE shards.shard = r.shard AND shards.epoch = r.epoch AND shards.owner = $1
            RETURNING shards.shard),
        candidates AS (
            SELECT shard FROM shards
            WHERE (owner IS NULL OR owner = $1 OR expires_at <= now() OR owner IN (SELECT node_id FROM dead))
              AND shard <> ALL($3::int[]) AND shard <> ALL($5::int[])
            ORDER BY shard LIMIT $7 FOR UPDATE SKIP LOCKED),
        claimed AS (
            UPDATE shards SET owner = $1, epoch = shards.epoch + 1, expires_at = now() + make_interval(secs => $2)
            FROM candidates WHERE shards.shard = candidates.shard
            RETURNING shards.shard, shards.epoch)
        SELECT 0, shard, 0::bigint, NULL::text FROM renewed
        UNION ALL SELECT 1, shard, epoch, NULL FROM claimed
        UNION ALL SELECT 2, (SELECT count(*) FROM others)::int + 1, 0, NULL
        UNION ALL SELECT 3, shard, epoch, owner FROM shards WHERE owner IN (SELECT node_id FROM others) AND expires_at > now()
        """

    /// How long, as a fraction of a lease, a node whose session is gone still counts as live: two
    /// renew intervals (a fifth of a lease each), time for it to reconnect and say so.
    static let sessionGraceFraction = 0.4

    package func leaseRound(_ round: ShardLeaseRound, node: String, leaseSeconds: Double) throws(StorageError) -> ShardLeaseRoundResult {
        guard !closed.withLock({ $0 }) else { throw .closed }
        let renew = round.renew.sorted { $0.key < $1.key }
        let release = round.release.sorted { $0.key < $1.key }
        var binds = PostgresBindings()
        binds.append(node)
        binds.append(leaseSeconds)
        binds.append(renew.map { Int32($0.key.rawValue) })
        binds.append(renew.map(\.value))
        binds.append(release.map { Int32($0.key.rawValue) })
        binds.append(release.map(\.value))
        binds.append(Int64(max(0, round.claim)))
        let open: PostgresConnection
        do {
            open = try session()
        } catch {
            throw .unavailable(reason: "cannot reach \(location) for shard leases: \(PostgresStore.describe(error))")
        }
        do {
            let rows = try PostgresStore.wait(open.query(PostgresQuery(unsafeSQL: Self.roundSQL, binds: binds), logger: logger),
                                              closingOnTimeout: open).rows
            var result = ShardLeaseRoundResult()
            for row in rows {
                let (kind, value, epoch, owner) = try row.decode((Int32, Int32, Int64, String?).self)
                switch kind {
                case 0: result.renewed.insert(ShardID(Int(value)))
                case 1: result.claimed[ShardID(Int(value))] = epoch
                case 2: result.liveNodes = Int(value)
                default: if let owner { result.owners[ShardID(Int(value))] = owner }
                }
            }
            return result
        } catch {
            // A statement the database refused (a deadlock, say) leaves the session as it was: it is
            // what marks this node live. Otherwise it may be half-dead: the next round starts another.
            let refusedByTheDatabase = (error as? PSQLError)?.serverInfo != nil
            let lost = refusedByTheDatabase ? nil : connection.withLock { current in
                defer { current = nil }
                return current
            }
            lost?.closeInBackground()
            throw .unavailable(reason: "shard lease round on \(location): \(PostgresStore.describe(error))")
        }
    }

    /// The lease session, opened (in the location's schema) when there is none or it was lost.
    private func session() throws -> PostgresConnection {
        if let current = connection.withLock({ $0 }), !current.isClosed { return current }
        let fresh = try PostgresStore.connect(location, on: group.next(), id: 4, logger: logger)
        do {
            if let schema = location.schema {
                _ = try PostgresStore.wait(fresh.query(PostgresQuery(unsafeSQL: "SET search_path TO \"\(schema)\""), logger: logger),
                                           closingOnTimeout: fresh)
            }
        } catch {
            fresh.closeInBackground()
            throw error
        }
        let kept = connection.withLock { current -> Bool in
            guard !closed.withLock({ $0 }) else { return false }
            current = fresh
            return true
        }
        guard kept else {
            fresh.closeInBackground()
            throw StorageError.closed
        }
        return fresh
    }
}
