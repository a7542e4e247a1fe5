import CheckmarkCore
import CheckmarkStorage

/// What a watch that resumes a channel found: the channel's events a connection of the user missed
/// after the sequence it last saw, up to the sequence at which its live events begin, or why the
/// journal cannot give them (the client must then re-read the channel's state). Pure: built from
/// journal rows and sequences, no I/O.
package struct ChannelResume: Sendable, Hashable {
    package var cid: ChannelCID
    /// The last `channel_seq` the client saw.
    package var after: Int64
    /// The channel's sequence when the watch took effect: replayed events end here, live ones follow.
    package var head: Int64
    package var outcome: Outcome

    package enum Outcome: Sendable, Hashable {
        /// The missed events for this user, in channel order (possibly none).
        case replayed([JournalEvent])
        /// The journal does not reach back to `after`, or never held it.
        case unavailable(reason: String)
    }

    /// The most events one resume replays; further back, the client re-reads state instead
    /// (the bound on what one reconnecting client can make the server send at once).
    package static let defaultMaxEvents = 10_000

    /// Checks before reading the journal: nil when the journal must be read for `after < seq <= head`.
    package static func precheck(cid: ChannelCID, after: Int64, head: Int64, maxEvents: Int) -> ChannelResume? {
        if after < 0 {
            return ChannelResume(cid: cid, after: after, head: head, outcome: .unavailable(reason: "last_seq must not be negative"))
        }
        if after > head {
            return ChannelResume(cid: cid, after: after, head: head, outcome: .unavailable(
                reason: "channel \(cid) has no event \(after): its newest is \(head); the server's history differs from the client's"))
        }
        if head - after > Int64(maxEvents) {
            return ChannelResume(cid: cid, after: after, head: head, outcome: .unavailable(
                reason: "\(head - after) events were missed, more than the \(maxEvents) a resume replays"))
        }
        if head == after { return ChannelResume(cid: cid, after: after, head: head, outcome: .replayed([])) }
        return nil
    }

    /// Builds the resume from the journal rows of `after < seq <= head`: every sequence must be present
    /// (none pruned) and carry its audience; the events are those a watching connection of `userID`
    /// receives, less the user's own notifications emitted after `openedAfterEventSeq` (the journal's
    /// last event sequence when the connection opened): those reached the connection live already.
    package static func build(cid: ChannelCID, userID: String, after: Int64, head: Int64, rows: [JournalEvent],
                             openedAfterEventSeq: Int64 = .max) -> ChannelResume {
        func unavailable(_ reason: String) -> ChannelResume {
            ChannelResume(cid: cid, after: after, head: head, outcome: .unavailable(reason: reason))
        }
        var expected = after + 1
        var events: [JournalEvent] = []
        for row in rows {
            guard row.channelSeq == expected else {
                return unavailable("the journal keeps channel \(cid)'s events from \(row.channelSeq ?? 0) on; \(expected) is gone")
            }
            guard let audience = row.audience else {
                return unavailable("event \(expected) of channel \(cid) was journaled by an older version, which cannot be resumed from")
            }
            let deliveredLive = row.seq > openedAfterEventSeq && audience.reachesEveryConnection(of: userID)
            if audience.reachesWatcher(userID) && !deliveredLive { events.append(row) }
            expected += 1
        }
        guard expected == head + 1 else {
            return unavailable("the journal no longer holds channel \(cid)'s events after \(expected - 1)")
        }
        return ChannelResume(cid: cid, after: after, head: head, outcome: .replayed(events))
    }
}
