import CheckmarkCore
import CheckmarkStorage

/// What a watch that resumes a channel found: the range of the channel's events a connection of the
/// user missed, after the sequence it last saw up to the sequence at which its live events begin, to
/// be replayed page by page as the connection drains (``page(cid:userID:expected:head:rows:openedAt:)``),
/// or why the journal cannot give them (the client must then re-read the channel's state). Pure: built
/// from journal rows and sequences, no I/O.
package struct ChannelResume: Sendable, Hashable {
    package var cid: ChannelCID
    /// The last `channel_seq` the client saw.
    package var after: Int64
    /// The channel's sequence when the watch took effect: replayed events end here, live ones follow.
    package var head: Int64
    package var outcome: Outcome

    package enum Outcome: Sendable, Hashable {
        /// The journal is to be read for `after < channel_seq <= head` (nothing to read when they are
        /// equal), leaving out the user's own notifications this node applied after the connection
        /// opened (`openedAt`): those reached it live already.
        case replay(openedAt: ConnectionOpening)
        /// The journal does not reach back to `after`, or never held it.
        case unavailable(reason: String)
    }

    /// One page of a replay: the events for the user among the journal rows read, and the last
    /// `channel_seq` those rows covered (the next page starts after it).
    package struct Page: Sendable, Hashable {
        package var events: [JournalEvent]
        package var through: Int64

        package init(events: [JournalEvent], through: Int64) {
            self.events = events
            self.through = through
        }
    }

    package init(cid: ChannelCID, after: Int64, head: Int64, outcome: Outcome) {
        self.cid = cid
        self.after = after
        self.head = head
        self.outcome = outcome
    }

    /// The most events one resume replays; further back, the client re-reads state instead.
    package static let defaultMaxEvents = 10_000

    /// Decides a resume before the journal is read: unavailable for a negative `after`, one past the
    /// channel's `head`, or more than `maxEvents` behind it; otherwise a replay of `after < seq <= head`.
    package static func plan(cid: ChannelCID, after: Int64, head: Int64, maxEvents: Int,
                             openedAt: ConnectionOpening = .unknown) -> ChannelResume {
        func unavailable(_ reason: String) -> ChannelResume {
            ChannelResume(cid: cid, after: after, head: head, outcome: .unavailable(reason: reason))
        }
        if after < 0 { return unavailable("last_seq must not be negative") }
        if after > head {
            return unavailable("channel \(cid) has no event \(after): its newest is \(head); the server's history differs from the client's")
        }
        if head - after > Int64(maxEvents) {
            return unavailable("\(head - after) events were missed, more than the \(maxEvents) a resume replays")
        }
        return ChannelResume(cid: cid, after: after, head: head, outcome: .replay(openedAt: openedAt))
    }

    /// One page of the replay from the journal rows read for `expected <= seq <= head` (oldest first,
    /// possibly fewer than the range): every sequence from `expected` on must be present (none pruned)
    /// and carry its audience; the events are those a watching connection of `userID` receives, less
    /// the user's own notifications this node applied after the connection opened (`openedAt`). The
    /// reason, when the journal cannot give the page.
    package static func page(cid: ChannelCID, userID: String, expected first: Int64, head: Int64, rows: [JournalEvent],
                             openedAt: ConnectionOpening = .unknown) -> Result<Page, UnavailableReplay> {
        var expected = first
        var events: [JournalEvent] = []
        for row in rows {
            guard row.channelSeq == expected, expected <= head else {
                return .failure(UnavailableReplay(
                    reason: "the journal keeps channel \(cid)'s events from \(row.channelSeq ?? 0) on; \(expected) is gone"))
            }
            guard let audience = row.audience else {
                return .failure(UnavailableReplay(
                    reason: "event \(expected) of channel \(cid) was journaled by an older version, which cannot be resumed from"))
            }
            let deliveredLive = openedAt.sawLive(row) && audience.reachesEveryConnection(of: userID)
            if audience.reachesWatcher(userID) && !deliveredLive { events.append(row) }
            expected += 1
        }
        guard expected > first || first > head else {
            return .failure(UnavailableReplay(reason: "the journal no longer holds channel \(cid)'s events after \(first - 1)"))
        }
        return .success(Page(events: events, through: expected - 1))
    }

    /// Why a page of a replay cannot be given: the client must re-read the channel's state.
    package struct UnavailableReplay: Error, Sendable, Hashable {
        package var reason: String

        package init(reason: String) { self.reason = reason }
    }
}
