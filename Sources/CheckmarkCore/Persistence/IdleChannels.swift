/// Decides which resident channels have been idle long enough to go back to storage
/// (``ReceiptsEngine/evict(_:)``): memory follows activity, not history.
///
/// A channel is active while a connection watches it or while storage has not yet made its last change
/// durable (the caller says so with `busy`), and each time its activity mark moves (the caller's count
/// of the channel's journaled events: a message, a read, a delivery). It is idle once neither has
/// happened for ``idleAfter`` milliseconds, counted from its last activity seen by a sweep or from its
/// load (``loaded(_:at:)``), whichever is later. So a channel leaves memory between `idleAfter` and
/// `idleAfter` plus the sweep interval after its last activity; a channel only read (queried, never
/// watched) is loaded again on its next use after that.
///
/// Deterministic: times are milliseconds of any monotonic clock, and the caller performs the evictions.
package struct IdleChannels: Sendable {
    /// How long a channel stays resident without activity (milliseconds, positive).
    package let idleAfter: Int64
    private var seen: [ChannelCID: Seen] = [:]

    private struct Seen: Sendable {
        var activity: Int64
        var since: Int64
    }

    /// One resident channel as a sweep sees it.
    package struct Resident: Sendable {
        package var cid: ChannelCID
        /// Moves whenever the channel changes (its journaled event count).
        package var activity: Int64
        /// Watched, or with changes storage has not confirmed: not evictable now.
        package var busy: Bool

        package init(cid: ChannelCID, activity: Int64, busy: Bool) {
            self.cid = cid
            self.activity = activity
            self.busy = busy
        }
    }

    package init(idleAfter: Int64) {
        precondition(idleAfter > 0, "a channel's idle time must be positive")
        self.idleAfter = idleAfter
    }

    /// The channel `cid` was loaded at `now` with activity mark `activity`: it is active as of now.
    package mutating func loaded(_ cid: ChannelCID, activity: Int64, at now: Int64) {
        seen[cid] = Seen(activity: activity, since: now)
    }

    /// The channels of `residents` idle for at least ``idleAfter`` at `now`, which the caller evicts.
    /// Channels not among `residents` are forgotten; a channel seen for the first time is active now.
    package mutating func sweep(_ residents: [Resident], at now: Int64) -> [ChannelCID] {
        var next: [ChannelCID: Seen] = [:]
        next.reserveCapacity(residents.count)
        var idle: [ChannelCID] = []
        for resident in residents {
            var entry = seen[resident.cid] ?? Seen(activity: resident.activity, since: now)
            if resident.busy || entry.activity != resident.activity {
                entry = Seen(activity: resident.activity, since: now)
            }
            if now - entry.since >= idleAfter {
                idle.append(resident.cid)
            } else {
                next[resident.cid] = entry
            }
        }
        seen = next
        return idle
    }

    /// Channels being watched for idleness (those seen by the last sweep or loaded since, not evicted).
    package var trackedCount: Int { seen.count }
}
