import CheckmarkCore

/// How many of each member's pointer passes are rows of SQLite's `pointer_passes` already, so that a
/// commit appends only the passes made since (a confirmation then writes the same few bytes however
/// long the member's history is).
///
/// Contract: it mirrors what the committed rows hold. ``SQLiteStore`` fills it from the table
/// (``init(storedCounts:)``) and updates it inside each write transaction; a failed transaction leaves
/// it ahead of the database, which is safe only because the store then accepts no further commit.
struct SQLitePassLedger: Sendable {
    /// The passes of one member to write.
    enum Write: Equatable {
        /// Append these passes after the rows already stored.
        case append(read: ArraySlice<PointerPass>, delivered: ArraySlice<PointerPass>)
        /// The member holds fewer passes than are stored (its history was replaced): delete its rows
        /// and write all of its passes again.
        case rewrite
    }

    private var stored: [ChannelCID: [String: (read: Int, delivered: Int)]] = [:]

    /// A ledger of `storedCounts`: each member's number of stored passes of each kind.
    init(storedCounts: some Sequence<(cid: ChannelCID, userID: String, kind: PointerPassKind, count: Int)>) {
        for row in storedCounts {
            var counts = stored[row.cid, default: [:]][row.userID] ?? (0, 0)
            switch row.kind {
            case .read: counts.read = row.count
            case .delivered: counts.delivered = row.count
            }
            stored[row.cid, default: [:]][row.userID] = counts
        }
    }

    /// Which passes of `member` (of channel `cid`) to write, counting them as stored from now on.
    mutating func write(of member: Member, in cid: ChannelCID) -> Write {
        let read = member.read.readPasses, delivered = member.read.deliveredPasses
        let counts = stored[cid]?[member.userID] ?? (0, 0)
        stored[cid, default: [:]][member.userID] = (read.count, delivered.count)
        guard counts.read <= read.count, counts.delivered <= delivered.count else { return .rewrite }
        return .append(read: read[counts.read...], delivered: delivered[counts.delivered...])
    }

    /// Records that every pass of `channel`'s members was written again, and that members no longer
    /// in it have none stored.
    mutating func rewrote(_ channel: Channel) {
        var counts: [String: (read: Int, delivered: Int)] = [:]
        for (userID, member) in channel.members { counts[userID] = (member.read.readPasses.count, member.read.deliveredPasses.count) }
        stored[channel.cid] = counts
    }

    /// The number of stored passes of each kind of member `userID` of `cid` (0 when none).
    func storedCount(of userID: String, in cid: ChannelCID) -> (read: Int, delivered: Int) {
        stored[cid]?[userID] ?? (0, 0)
    }
}
