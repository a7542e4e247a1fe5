import CheckmarkCore

/// Which of each member's pointer passes are rows of `pointer_passes` already, so that a commit
/// appends only the passes made since (a confirmation then writes the same few bytes however long
/// the member's history is).
///
/// Contract: on one node (``SQLiteStore``) it mirrors what the committed rows hold: made from the
/// loaded state or the table, updated inside each write transaction, and dropped when a transaction
/// fails (the next commit makes it from the table again). On a cluster node (``PostgresStore``) it is
/// a lower bound: other nodes append passes too, so a commit writes the passes from what this node
/// knows to be stored on, and rows already there are left as they are (every node's engine holds the
/// same passes at the same ordinals). It relies on how the engine keeps passes: a
/// member's passes only grow, and a member removed and added again starts with none, its first pass
/// beyond every position of its former membership.
struct PassLedger: Sendable {
    /// The passes of one member to write.
    enum Write: Equatable {
        /// Append these passes after the rows already stored.
        case append(read: Slice<PointerPasses>, delivered: Slice<PointerPasses>)
        /// The stored rows are not the start of the member's passes (it left the channel and joined
        /// again, or holds fewer passes than are stored): delete its rows and write all of its passes.
        case rewrite

        /// The same passes to append (compared pass by pass), or both rewrites.
        static func == (lhs: Write, rhs: Write) -> Bool {
            switch (lhs, rhs) {
            case let (.append(read, delivered), .append(otherRead, otherDelivered)):
                read.elementsEqual(otherRead) && delivered.elementsEqual(otherDelivered)
            case (.rewrite, .rewrite): true
            case (.append, .rewrite), (.rewrite, .append): false
            }
        }
    }

    /// How many passes of one kind are stored, and the position of the last of them.
    struct Stored: Sendable, Equatable {
        var count: Int
        var lastPosition: Int

        static let none = Stored(count: 0, lastPosition: 0)

        init(count: Int, lastPosition: Int) {
            self.count = count
            self.lastPosition = lastPosition
        }

        init(_ passes: PointerPasses) {
            self.init(count: passes.count, lastPosition: passes.last?.position ?? 0)
        }

        /// Whether `passes` begin with the stored ones (checked by the last stored position).
        func isStart(of passes: PointerPasses) -> Bool {
            count <= passes.count && (count == 0 || passes[count - 1].position == lastPosition)
        }
    }

    private var stored: [ChannelCID: [String: (read: Stored, delivered: Stored)]] = [:]

    /// A ledger of `rows`: for each member and kind of pass, how many are stored and the last position.
    init(stored rows: some Sequence<(cid: ChannelCID, userID: String, kind: PointerPassKind, stored: Stored)>) {
        for row in rows {
            var member = stored[row.cid, default: [:]][row.userID] ?? (.none, .none)
            switch row.kind {
            case .read: member.read = row.stored
            case .delivered: member.delivered = row.stored
            }
            stored[row.cid, default: [:]][row.userID] = member
        }
    }

    /// A ledger of every pass of `channels`' members, as loaded.
    init(loaded channels: [Channel]) {
        for channel in channels {
            var members: [String: (read: Stored, delivered: Stored)] = [:]
            for (userID, member) in channel.members where !member.read.readPasses.isEmpty || !member.read.deliveredPasses.isEmpty {
                members[userID] = (Stored(member.read.readPasses), Stored(member.read.deliveredPasses))
            }
            if !members.isEmpty { stored[channel.cid] = members }
        }
    }

    /// Takes the passes of `channel`'s members as stored (a channel loaded alone, as it is in storage).
    mutating func learn(_ channel: Channel) {
        stored[channel.cid] = nil
        for (userID, member) in channel.members where !member.read.readPasses.isEmpty || !member.read.deliveredPasses.isEmpty {
            stored[channel.cid, default: [:]][userID] = (Stored(member.read.readPasses), Stored(member.read.deliveredPasses))
        }
    }

    /// Forgets the passes of `cids`' members: their channels left memory, and each is learnt again
    /// when it loads (``learn(_:)``) before any of its members' passes is written.
    mutating func forget(_ cids: [ChannelCID]) {
        for cid in cids { stored[cid] = nil }
    }

    /// Which passes of `member` (of channel `cid`) to write, counting them all as stored from now on.
    mutating func write(of member: Member, in cid: ChannelCID) -> Write {
        let read = member.read.readPasses, delivered = member.read.deliveredPasses
        let before = stored[cid]?[member.userID] ?? (.none, .none)
        stored[cid, default: [:]][member.userID] = (Stored(read), Stored(delivered))
        guard before.read.isStart(of: read), before.delivered.isStart(of: delivered) else { return .rewrite }
        return .append(read: read[before.read.count...], delivered: delivered[before.delivered.count...])
    }

    /// The members of `channel.cid` with stored passes who are no longer in `channel`, forgotten: the
    /// caller deletes their rows.
    mutating func forgetFormerMembers(of channel: Channel) -> [String] {
        guard let members = stored[channel.cid] else { return [] }
        let former = members.keys.filter { channel.members[$0] == nil }.sorted()
        for userID in former { stored[channel.cid]![userID] = nil }
        return former
    }

    /// What is stored of member `userID`'s passes in `cid` (none when nothing is).
    func stored(of userID: String, in cid: ChannelCID) -> (read: Stored, delivered: Stored) {
        stored[cid]?[userID] ?? (.none, .none)
    }
}
