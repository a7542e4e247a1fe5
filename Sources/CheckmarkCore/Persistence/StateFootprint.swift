/// The durable rows one applied command changed: what storage must write in the same transaction as
/// the command's journal entry. The engine notes each key where it changes the row
/// (``ReceiptsEngine/touched``) and hands the record over with ``ReceiptsEngine/takeFootprint(into:)``.
package struct StateFootprint: Sendable, Hashable {
    /// One member's row of one channel (its read state).
    package struct MemberKey: Sendable, Hashable {
        package var cid: ChannelCID
        package var userID: String
        package init(cid: ChannelCID, userID: String) {
            self.cid = cid
            self.userID = userID
        }
    }

    /// One message of one channel, by its position in the channel's list.
    package struct MessageKey: Sendable, Hashable {
        package var cid: ChannelCID
        package var position: Int
        package init(cid: ChannelCID, position: Int) {
            self.cid = cid
            self.position = position
        }
    }

    /// One participant's read state in one thread.
    package struct ThreadReadKey: Sendable, Hashable {
        package var cid: ChannelCID
        package var parentID: String
        package var userID: String
        package init(cid: ChannelCID, parentID: String, userID: String) {
            self.cid = cid
            self.parentID = parentID
            self.userID = userID
        }
    }

    package var users: Set<String> = []
    package var channelTypes: Set<String> = []
    /// Channels whose row and whole member list (order included) are rewritten.
    package var channels: Set<ChannelCID> = []
    package var members: Set<MemberKey> = []
    package var messages: Set<MessageKey> = []
    /// Messages edited or deleted (their `message_edits` rows).
    package var messageEdits: Set<MessageKey> = []
    /// Messages whose reactions changed (their `reactions` rows, all rewritten).
    package var messageReactions: Set<MessageKey> = []
    /// Thread read states (a rewritten channel rewrites all of its own).
    package var threadReads: Set<ThreadReadKey> = []

    package init() {}

    package var isEmpty: Bool {
        users.isEmpty && channelTypes.isEmpty && channels.isEmpty && members.isEmpty && messages.isEmpty && messageEdits.isEmpty
            && messageReactions.isEmpty && threadReads.isEmpty
    }

    /// The channels any noted row belongs to.
    package var channelIDs: Set<ChannelCID> {
        var cids = channels
        for key in members { cids.insert(key.cid) }
        for key in messages { cids.insert(key.cid) }
        for key in messageEdits { cids.insert(key.cid) }
        for key in messageReactions { cids.insert(key.cid) }
        for key in threadReads { cids.insert(key.cid) }
        return cids
    }

    /// Empties every set, keeping their storage (for a record that is filled again).
    package mutating func removeAll(keepingCapacity: Bool) {
        users.removeAll(keepingCapacity: keepingCapacity)
        channelTypes.removeAll(keepingCapacity: keepingCapacity)
        channels.removeAll(keepingCapacity: keepingCapacity)
        members.removeAll(keepingCapacity: keepingCapacity)
        messages.removeAll(keepingCapacity: keepingCapacity)
        messageEdits.removeAll(keepingCapacity: keepingCapacity)
        messageReactions.removeAll(keepingCapacity: keepingCapacity)
        threadReads.removeAll(keepingCapacity: keepingCapacity)
    }

    /// Adds another command's rows (a batch writes the union once).
    package mutating func formUnion(_ other: StateFootprint) {
        users.formUnion(other.users)
        channelTypes.formUnion(other.channelTypes)
        channels.formUnion(other.channels)
        members.formUnion(other.members)
        messages.formUnion(other.messages)
        messageEdits.formUnion(other.messageEdits)
        messageReactions.formUnion(other.messageReactions)
        threadReads.formUnion(other.threadReads)
    }
}
