/// The durable rows one applied command changed: what storage must write in the same transaction as
/// the command's journal entry. The engine notes each key where it changes the row
/// (``ReceiptsEngine/touched``) and hands the record over with ``ReceiptsEngine/takeFootprint(into:)``.
public struct StateFootprint: Sendable, Hashable {
    /// One member's row of one channel (its read state).
    public struct MemberKey: Sendable, Hashable {
        public var cid: ChannelCID
        public var userID: String
        public init(cid: ChannelCID, userID: String) {
            self.cid = cid
            self.userID = userID
        }
    }

    /// One message of one channel, by its position in the channel's list.
    public struct MessageKey: Sendable, Hashable {
        public var cid: ChannelCID
        public var position: Int
        public init(cid: ChannelCID, position: Int) {
            self.cid = cid
            self.position = position
        }
    }

    /// One participant's read state in one thread.
    public struct ThreadReadKey: Sendable, Hashable {
        public var cid: ChannelCID
        public var parentID: String
        public var userID: String
        public init(cid: ChannelCID, parentID: String, userID: String) {
            self.cid = cid
            self.parentID = parentID
            self.userID = userID
        }
    }

    public var users: Set<String> = []
    public var channelTypes: Set<String> = []
    /// Channels whose row and whole member list (order included) are rewritten.
    public var channels: Set<ChannelCID> = []
    public var members: Set<MemberKey> = []
    public var messages: Set<MessageKey> = []
    /// Thread read states (a rewritten channel rewrites all of its own).
    public var threadReads: Set<ThreadReadKey> = []
    /// The generated-id counter (the clock and the journal's counters are written with every batch).
    public var counters = false

    public init() {}

    public var isEmpty: Bool {
        users.isEmpty && channelTypes.isEmpty && channels.isEmpty && members.isEmpty && messages.isEmpty && threadReads.isEmpty && !counters
    }

    /// Empties every set, keeping their storage (for a record that is filled again).
    public mutating func removeAll(keepingCapacity: Bool) {
        users.removeAll(keepingCapacity: keepingCapacity)
        channelTypes.removeAll(keepingCapacity: keepingCapacity)
        channels.removeAll(keepingCapacity: keepingCapacity)
        members.removeAll(keepingCapacity: keepingCapacity)
        messages.removeAll(keepingCapacity: keepingCapacity)
        threadReads.removeAll(keepingCapacity: keepingCapacity)
        counters = false
    }

    /// Adds another command's rows (a batch writes the union once).
    public mutating func formUnion(_ other: StateFootprint) {
        users.formUnion(other.users)
        channelTypes.formUnion(other.channelTypes)
        channels.formUnion(other.channels)
        members.formUnion(other.members)
        messages.formUnion(other.messages)
        threadReads.formUnion(other.threadReads)
        counters = counters || other.counters
    }
}
