import CheckmarkCore

/// The loaded rows of every state table, put together into the state they store, the same way for
/// either engine: channels first, then their messages one at a time in (cid, position) order (so that
/// a store can stream them instead of holding every row twice), then members in (cid, position)
/// order. Messages and members must belong to a channel, messages without gaps.
struct StoredStateAssembly {
    var users: [User] = []
    var channelTypes: [ChannelType] = []
    var members: [StateTables.MemberRow] = []
    var threadReads: [ThreadReadRow] = []
    var threads: [StateTables.ThreadRow] = []
    /// Edits and deletions of the channels' messages (not of a dormant load's).
    var messageEdits: [MessageEditRow] = []
    /// Reactions of the channels' messages, per message oldest first (not of a dormant load's).
    var reactions: [StateTables.ReactionRow] = []
    /// Each thread's counts as the loaded replies give them (what ``threads`` must say).
    private var loadedThreads: [ChannelCID: [String: (replies: Int, countable: Int)]] = [:]
    /// A dormant load's channels, who has unread replies where, and each channel's countable messages.
    private var dormant: [ChannelCID: DormantChannel] = [:]
    private var unreadThreads: [ChannelCID: [String: Int]] = [:]
    private var countableThrough: [ChannelCID: Int] = [:]
    var counters: [StateTables.CounterRow] = []
    var channelSequences: [StateTables.SequenceRow] = []
    private var byCID: [ChannelCID: Channel] = [:]
    /// Where the rows come from, for errors.
    let path: String
    /// Texts held of each channel's newest messages; older ones are archived.
    let messageWindow: Int
    private var messageCounts: [ChannelCID: Int] = [:]

    init(path: String, messageWindow: Int = .max) {
        self.path = path
        self.messageWindow = messageWindow
    }

    /// Sets the channels, before any message. `messageCounts` (by cid; a channel missing has none)
    /// sizes each channel's message list once and says which texts are archived.
    /// `idBytes`, the length of a channel's newest id where known, sizes its id buffer (ids that
    /// count up grow longer, so the newest is the longest).
    mutating func setChannels(_ channels: [Channel], messageCounts: [ChannelCID: Int], idBytes: [ChannelCID: Int] = [:]) {
        self.messageCounts = messageCounts
        byCID = [:]
        byCID.reserveCapacity(channels.count)
        for var channel in channels {
            if let count = messageCounts[channel.cid] {
                // Capped: one long id chosen by a client must not size the buffer of a whole channel.
                let bytesPerID = min(idBytes[channel.cid] ?? MessageLog.typicalIDBytes, 4 * MessageLog.typicalIDBytes)
                channel.messages.reserveCapacity(count, bytesPerID: bytesPerID)
            }
            byCID[channel.cid] = channel
        }
    }

    /// Whether the message at `position` of `cid` is among the channel's newest ``messageWindow``,
    /// whose texts are held (a loader need not read the others').
    func holdsText(of cid: ChannelCID, at position: Int) -> Bool {
        position >= (messageCounts[cid] ?? 0) - messageWindow
    }

    /// Appends the next message of its channel, at `position`, stored with `countableBefore` countable
    /// messages before it; its text is dropped unless ``holdsText(of:at:)``. It shares its channel's cid
    /// instead of keeping a copy.
    /// - Throws: ``StorageError/corrupt(path:reason:)`` for a message of no channel, out of place, or
    ///   whose stored count of countable messages before it is not the count of those loaded.
    mutating func appendMessage(_ message: consuming Message, at position: Int, countableBefore: Int) throws(StorageError) {
        guard let index = byCID.index(forKey: message.cid) else { throw .corrupt(path: path, reason: "message of unknown channel \(message.cid)") }
        let holding = holdsText(of: message.cid, at: position)
        if let parentID = message.parentID {
            loadedThreads[message.cid, default: [:]][parentID, default: (0, 0)].replies += 1
            if !message.silent { loadedThreads[message.cid]![parentID]!.countable += 1 }
        }
        try Self.append(message, at: position, countableBefore: countableBefore, holdingText: holding, to: &byCID.values[index], path: path)
    }

    /// Appends in place (not through a copy of the channel).
    private static func append(_ message: consuming Message, at position: Int, countableBefore: Int, holdingText: Bool,
                               to channel: inout Channel, path: String) throws(StorageError) {
        guard position == channel.messages.count else {
            throw .corrupt(path: path, reason: "messages of \(channel.cid) have a gap at position \(position)")
        }
        guard countableBefore == channel.messages.countableCount else {
            throw .corrupt(path: path, reason: "message \(position) of \(channel.cid) is stored after \(countableBefore) countable messages, not \(channel.messages.countableCount)")
        }
        message.cid = channel.cid
        channel.messages.appendStored(message, holdingText: holdingText)
    }

    /// The SQL expression (both engines) of the countable messages through a `messages` row: those
    /// before it and itself if it counts (rule 4: a channel message, not silent).
    static let countableThroughSQL =
        "countable_before + CASE WHEN (parent_id IS NULL OR show_in_channel) AND NOT silent THEN 1 ELSE 0 END"

    /// The `members` columns a dormant load reads (not the pointer passes), in the order
    /// ``appendDormantMember(cid:userID:readPosition:lastRead:unread:countableSeen:)`` takes them.
    static let dormantMemberColumns = "cid, user_id, read_position, last_read, unread_messages, countable_seen"

    /// A stored unread count brought forward: `unread` as of `seen` countable messages (or replies),
    /// with `countable` now; between two writes of its row only others' messages add to it.
    /// - Throws: ``StorageError/corrupt(path:reason:)`` when the counts do not add up (`what` says whose).
    static func broughtForward(_ unread: Int, seen: Int, countable: Int, path: String, of what: @autoclosure () -> String) throws(StorageError) -> Int {
        let now = unread + countable - seen
        guard seen <= countable, unread >= 0, now <= countable else {
            throw .corrupt(path: path, reason: "\(what()): \(unread) unread of \(seen) countable, now \(countable)")
        }
        return now
    }

    /// Starts a load that leaves every channel dormant (``DormantChannel``): the channels set (by
    /// ``setChannels(_:messageCounts:idBytes:)``), their newest messages in `lastMessages` (position,
    /// time, and the countable messages through it), and the threads and thread reads set, which say
    /// who has unread replies. Members come next, one at a time, in their channels' order.
    /// - Throws: ``StorageError/corrupt(path:reason:)`` for thread counts that do not add up.
    mutating func beginDormant(lastMessages: [ChannelCID: (position: Int, createdAt: Timestamp, countable: Int)]) throws(StorageError) {
        var countableReplies: [ChannelCID: [String: Int]] = [:]
        for (cid, parentID, _, countable) in threads { countableReplies[cid, default: [:]][parentID] = countable }
        unreadThreads = [:]
        for row in threadReads {
            let unread = try Self.broughtForward(
                row.read.unreadReplies, seen: row.repliesSeen, countable: countableReplies[row.cid]?[row.parentID] ?? 0, path: path,
                of: "\(row.userID) in the thread of \(row.parentID) in \(row.cid)")
            if unread > 0 { unreadThreads[row.cid, default: [:]][row.userID, default: 0] += 1 }
        }
        threads = []
        threadReads = []
        dormant = [:]
        dormant.reserveCapacity(byCID.count)
        for (cid, channel) in byCID {
            let last = lastMessages[cid]
            dormant[cid] = DormantChannel(cid: cid, createdBy: channel.createdBy, createdAt: channel.createdAt, lastMessageAt: last?.createdAt,
                                          messageCount: last.map { $0.position + 1 } ?? 0, members: [])
        }
        byCID = [:]
        countableThrough = lastMessages.mapValues(\.countable)
    }

    /// Appends a member to its dormant channel, its unread count brought forward.
    /// - Throws: ``StorageError/corrupt(path:reason:)`` for a member of no channel, or counts that do not add up.
    mutating func appendDormantMember(cid: ChannelCID, userID: String, readPosition: Int64, lastRead: Int64, unread: Int64,
                                      countableSeen: Int64) throws(StorageError) {
        guard let index = dormant.index(forKey: cid) else { throw .corrupt(path: path, reason: "member of unknown channel \(cid)") }
        let now = try Self.broughtForward(Int(unread), seen: Int(countableSeen), countable: countableThrough[cid] ?? 0, path: path,
                                          of: "\(userID) in \(cid)")
        dormant.values[index].members.append(DormantChannel.Member(
            userID: userID, readPosition: Int(readPosition), lastRead: Timestamp(rawValue: lastRead), unreadMessages: now,
            unreadThreads: unreadThreads[cid]?[userID] ?? 0))
    }

    /// The state with every channel dormant, once its members are in.
    consuming func assembleDormant() -> StoredState {
        var snapshot = ReceiptsSnapshot()
        snapshot.users = users.sorted { $0.id < $1.id }
        snapshot.channelTypes = channelTypes.sorted { $0.name < $1.name }
        snapshot.dormantChannels = dormant.values.sorted { $0.cid < $1.cid }
        dormant = [:]
        return finish(snapshot)
    }

    /// Each member's unread count is brought forward from when its row was written: the stored count
    /// plus the channel's countable messages since (``StateTables/members``).
    /// - Throws: ``StorageError/corrupt(path:reason:)`` for rows that do not fit together.
    consuming func assemble() throws(StorageError) -> StoredState {
        var snapshot = ReceiptsSnapshot()
        snapshot.users = users.sorted { $0.id < $1.id }
        snapshot.channelTypes = channelTypes.sorted { $0.name < $1.name }
        for (cid, _, var member, countableSeen) in members {
            guard let index = byCID.index(forKey: cid) else { throw .corrupt(path: path, reason: "member of unknown channel \(cid)") }
            member.read.unreadMessages = try Self.broughtForward(
                member.read.unreadMessages, seen: countableSeen, countable: byCID.values[index].messages.countableCount, path: path,
                of: "\(member.userID) in \(cid)")
            byCID.values[index].members[member.userID] = member
            byCID.values[index].memberOrder.append(member.userID)
        }
        for row in messageEdits {
            guard let index = byCID.index(forKey: row.cid), row.position < byCID.values[index].messages.count else {
                throw .corrupt(path: path, reason: "edit of message \(row.position) of \(row.cid), which is not stored")
            }
            byCID.values[index].messages.restoreRevision(at: row.position, row.revision, text: row.text,
                                                         holdingText: holdsText(of: row.cid, at: row.position))
        }
        messageEdits = []
        var reactionLists: [ChannelCID: [Int: [Reaction]]] = [:]
        for (cid, position, reaction) in reactions { reactionLists[cid, default: [:]][position, default: []].append(reaction) }
        reactions = []
        for (cid, lists) in reactionLists {
            guard let index = byCID.index(forKey: cid) else { throw .corrupt(path: path, reason: "reaction in unknown channel \(cid)") }
            for (position, list) in lists {
                guard position < byCID.values[index].messages.count else {
                    throw .corrupt(path: path, reason: "reaction to message \(position) of \(cid), which is not stored")
                }
                byCID.values[index].messages.setReactions(list, at: position)
            }
        }
        var storedThreads: [ChannelCID: [String: (replies: Int, countable: Int)]] = [:]
        for (cid, parentID, replies, countable) in threads { storedThreads[cid, default: [:]][parentID] = (replies, countable) }
        for (cid, loaded) in loadedThreads {
            for (parentID, counts) in loaded where storedThreads[cid]?[parentID].map({ $0 != counts }) ?? true {
                let stored = storedThreads[cid]?[parentID].map { "\($0.replies) replies, \($0.countable) countable" } ?? "nothing"
                throw .corrupt(path: path, reason: "the thread of \(parentID) in \(cid) has \(counts.replies) replies, \(counts.countable) countable; stored: \(stored)")
            }
        }
        for row in threadReads {
            guard let index = byCID.index(forKey: row.cid) else { throw .corrupt(path: path, reason: "thread read of unknown channel \(row.cid)") }
            var read = row.read
            read.unreadReplies = try Self.broughtForward(
                read.unreadReplies, seen: row.repliesSeen, countable: storedThreads[row.cid]?[row.parentID]?.countable ?? 0, path: path,
                of: "\(row.userID) in the thread of \(row.parentID) in \(row.cid)")
            byCID.values[index].threads[row.parentID, default: MessageThread(parentID: row.parentID)].reads[row.userID] = read
        }
        snapshot.channels = byCID.values.sorted { $0.cid < $1.cid }
        byCID = [:]
        return finish(snapshot)
    }

    /// The stored state of `snapshot` with the counters and sequences (each the greatest of its rows:
    /// the journal's own positions and those retention kept, ``JournalPositions``).
    private func finish(_ snapshot: ReceiptsSnapshot) -> StoredState {
        var snapshot = snapshot
        let named = Dictionary(counters.map { ($0.name, $0.value) }, uniquingKeysWith: max)
        snapshot.clock = Timestamp(rawValue: named["clock"] ?? 0)
        var channelSeqs: [ChannelCID: Int64] = [:]
        for (cid, seq) in channelSequences { channelSeqs[cid] = seq }
        var streamSeqs = Array(repeating: Int64(0), count: JournalStream.count)
        for (name, value) in named {
            if let stream = JournalPositions.stream(named: name) { streamSeqs[stream.rawValue] = value }
        }
        return StoredState(
            snapshot: snapshot, lastSeq: named["last_seq"] ?? 0, lastEventSeq: named["last_event_seq"] ?? 0, channelSeqs: channelSeqs,
            streamSeqs: streamSeqs)
    }
}
