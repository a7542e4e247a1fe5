import CheckmarkCore

/// Everything one group commit writes in one transaction: the journal entries of the commands it
/// covers and the current values of every durable row they changed.
package struct CommitBatch: Sendable {
    package var entries: [JournalEntry] = []
    package var users: [User] = []
    package var channelTypes: [ChannelType] = []
    /// Channels whose row and whole member list are rewritten.
    package var channels: [Channel] = []
    /// Single member rows whose read state changed (the rows exist: members are only added or
    /// removed by a channel rewrite), each with its channel's ``MessageLog/countableCount`` when the
    /// batch was taken (what its unread count is as of).
    package var members: [(cid: ChannelCID, member: Member, countableSeen: Int)] = []
    /// New messages, each with how many messages before it in its channel count as unread for others.
    package var messages: [(position: Int, message: Message, countableBefore: Int)] = []
    /// Messages edited or deleted: their revisions and current texts.
    package var messageEdits: [MessageEditRow] = []
    /// Per channel, the edits whose texts ``messageEdits`` stores (message position: edit number,
    /// ``MessageLog/pendingEdit(at:)``): what ``ReceiptsEngine/markEditsDurable(_:)`` takes.
    package var storedEdits: [ChannelCID: [Int: Int]] = [:]
    /// Messages whose reactions changed: their rows are deleted and these written (none: all gone).
    package var messageReactions: [(cid: ChannelCID, position: Int, reactions: [Reaction])] = []
    /// Thread read states that changed, outside rewritten channels (those rewrite all of theirs).
    package var threadReads: [ThreadReadRow] = []
    /// The counts of the threads the batch's new messages reply to.
    package var threads: [(cid: ChannelCID, parentID: String, replyCount: Int, countableReplies: Int)] = []
    /// Cluster: the shards whose owner applied the batch's commands, at the epochs it holds them at,
    /// and that owner. The commit writes nothing unless the node still owns every one at its epoch.
    package var fence: [ShardID: Int64] = [:]
    package var fenceOwner = ""

    package init() {}

    /// Reads the rows of `footprint` from the engine's current state. Members no longer in their
    /// channel and rows of unknown channels are skipped (nothing to write).
    package init(entries: [JournalEntry], footprint: StateFootprint, engine: ReceiptsEngine) {
        self.entries = entries
        users = footprint.users.compactMap { engine.users[$0] }
        channelTypes = footprint.channelTypes.compactMap { engine.channelTypes[$0] }
        channels = footprint.channels.compactMap { engine.channels[$0] }
        for key in footprint.members where !footprint.channels.contains(key.cid) {
            guard let channel = engine.channels[key.cid], let member = channel.members[key.userID] else { continue }
            members.append((key.cid, member, channel.messages.countableCount))
        }
        var newMessages: [ChannelCID: [Int]] = [:]
        var repliedTo: [ChannelCID: Set<String>] = [:]
        for key in footprint.messages { newMessages[key.cid, default: []].append(key.position) }
        for (cid, positions) in newMessages {
            guard let log = engine.channels[cid]?.messages else { continue }
            // Newest first, counting back from the channel's total in one walk.
            var countable = log.countableCount
            var walked = log.count
            for position in positions.sorted(by: >) where position < log.count {
                while walked > position {
                    walked -= 1
                    if log.isCountable(at: walked) { countable -= 1 }
                }
                // A text is archived only once storage confirmed its message (``MessageLog``): one not
                // stored yet is always held.
                guard let message = log.sentMessage(at: position) else {
                    preconditionFailure("message \(position) of \(cid) was archived before it was stored")
                }
                messages.append((position, message, countable))
                if let parentID = message.parentID, repliedTo[cid, default: []].insert(parentID).inserted,
                   let thread = engine.channels[cid]?.threads[parentID] {
                    threads.append((cid, parentID, thread.replyPositions.count, thread.countableReplies))
                }
            }
        }
        messages.sort { $0.message.createdAt < $1.message.createdAt }
        for key in footprint.messageEdits {
            guard let log = engine.channels[key.cid]?.messages, key.position < log.count, let revision = log.revision(at: key.position) else { continue }
            var text: String?
            if revision.textUpdatedAt != nil || revision.hardDeleted {
                // An edited text is held until storage confirms the row that stores it (``MessageLog``).
                guard let edit = log.pendingEdit(at: key.position), let current = log.text(at: key.position) else {
                    preconditionFailure("the edited text of message \(key.position) of \(key.cid) left memory before it was stored")
                }
                text = current
                storedEdits[key.cid, default: [:]][key.position] = edit
            }
            messageEdits.append(MessageEditRow(cid: key.cid, position: key.position, revision: revision, text: text))
        }
        messageEdits.sort { ($0.cid, $0.position) < ($1.cid, $1.position) }
        for key in footprint.messageReactions {
            guard let log = engine.channels[key.cid]?.messages, key.position < log.count else { continue }
            messageReactions.append((key.cid, key.position, log.reactions(at: key.position)))
        }
        messageReactions.sort { ($0.cid, $0.position) < ($1.cid, $1.position) }
        // A command journaled without its text only when the batch stores that very text.
        for index in self.entries.indices {
            guard let position = self.entries[index].messagePosition else { continue }
            guard case .sendMessage(let cid, _, let draft) = self.entries[index].command,
                  footprint.messages.contains(StateFootprint.MessageKey(cid: cid, position: position)),
                  let log = engine.channels[cid]?.messages, position < log.count, log.sentText(at: position) == draft.text else {
                self.entries[index].messagePosition = nil
                continue
            }
        }
        for key in footprint.threadReads where !footprint.channels.contains(key.cid) {
            guard let thread = engine.channels[key.cid]?.threads[key.parentID], let read = thread.reads[key.userID] else { continue }
            threadReads.append(ThreadReadRow(cid: key.cid, parentID: key.parentID, userID: key.userID, read: read,
                                             repliesSeen: thread.countableReplies))
        }
    }

    /// The rows of ``messageReactions``.
    var reactionRows: [StateTables.ReactionRow] {
        messageReactions.flatMap { cid, position, reactions in reactions.map { (cid, position, $0) } }
    }

    /// Per channel, how many of its messages are stored once the batch is durable (its newest
    /// message's position plus one): what ``ReceiptsEngine/markMessagesDurable(_:)`` takes.
    package var storedMessageCounts: [ChannelCID: Int] {
        var counts: [ChannelCID: Int] = [:]
        for (position, message, _) in messages { counts[message.cid] = max(counts[message.cid] ?? 0, position + 1) }
        return counts
    }

    /// Each channel's last event sequence in the batch.
    var channelSequenceRows: [StateTables.SequenceRow] {
        var last: [ChannelCID: Int64] = [:]
        for entry in entries {
            for event in entry.events { if let cid = event.cid, let seq = event.channelSeq { last[cid] = seq } }
        }
        return last.map { ($0.key, $0.value) }
    }
}
