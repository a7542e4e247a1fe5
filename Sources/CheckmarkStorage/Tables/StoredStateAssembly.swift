import CheckmarkCore

/// The loaded rows of every state table, put together into the state they store, the same way for
/// either engine: messages and members are given in (cid, position) order, and must belong to a
/// channel, messages without gaps.
struct StoredStateAssembly {
    var users: [User] = []
    var channelTypes: [ChannelType] = []
    var channels: [Channel] = []
    var messages: [StateTables.MessageRow] = []
    var members: [StateTables.MemberRow] = []
    var threadReads: [ThreadReadRow] = []
    var counters: [StateTables.CounterRow] = []
    var channelSequences: [StateTables.SequenceRow] = []

    /// - Throws: ``StorageError/corrupt(path:reason:)`` (at `path`) for rows that do not fit together.
    func assemble(path: String) throws(StorageError) -> StoredState {
        var snapshot = ReceiptsSnapshot()
        snapshot.users = users.sorted { $0.id < $1.id }
        snapshot.channelTypes = channelTypes.sorted { $0.name < $1.name }
        var byCID: [ChannelCID: Channel] = [:]
        for channel in channels { byCID[channel.cid] = channel }
        for (position, message) in messages {
            let cid = message.cid
            guard byCID[cid] != nil else { throw .corrupt(path: path, reason: "message of unknown channel \(cid)") }
            guard position == byCID[cid]!.messages.count else {
                throw .corrupt(path: path, reason: "messages of \(cid) have a gap at position \(position)")
            }
            byCID[cid]!.messages.append(message)
        }
        for (cid, _, member) in members {
            guard byCID[cid] != nil else { throw .corrupt(path: path, reason: "member of unknown channel \(cid)") }
            byCID[cid]!.members[member.userID] = member
            byCID[cid]!.memberOrder.append(member.userID)
        }
        for row in threadReads {
            guard byCID[row.cid] != nil else { throw .corrupt(path: path, reason: "thread read of unknown channel \(row.cid)") }
            row.restore(into: &byCID[row.cid]!)
        }
        snapshot.channels = byCID.values.sorted { $0.cid < $1.cid }
        let named = Dictionary(counters.map { ($0.name, $0.value) }) { _, last in last }
        snapshot.generatedMessageIDs = Int(named["generated_message_ids"] ?? 0)
        snapshot.clock = Timestamp(rawValue: named["clock"] ?? 0)
        var channelSeqs: [ChannelCID: Int64] = [:]
        for (cid, seq) in channelSequences { channelSeqs[cid] = seq }
        return StoredState(
            snapshot: snapshot, lastSeq: named["last_seq"] ?? 0, lastEventSeq: named["last_event_seq"] ?? 0, channelSeqs: channelSeqs)
    }
}
