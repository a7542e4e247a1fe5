/// A channel: its members with their read states, its messages in order, and the connections
/// watching it.
public struct Channel: Sendable {
    public var cid: ChannelCID
    public var createdBy: String?
    public var createdAt: Timestamp
    public var members: [String: Member] = [:]
    /// Member ids in the order they were added, which is also the order of their `createdAt`: members
    /// join at the engine's clock, which never runs backwards, and a restored channel is put back in
    /// that order. The newest members are therefore the last ones, with no sort, whatever the size.
    public var memberOrder: [String] = []
    /// All messages, channel messages and thread replies, in `createdAt` order; old ones without
    /// their texts (``MessageLog``).
    public var messages: MessageLog
    /// Positions of the channel messages (not thread-only replies) in ``messages``, oldest first:
    /// what channel queries page through. Derived (rebuilt on restore).
    public internal(set) var channelMessagePositions: [Int] = []
    /// Threads by their parent message's id, with their participants' read states.
    public var threads: [String: MessageThread] = [:]
    /// Connections watching, in the order they started, with their users.
    public private(set) var watchers: [Watcher] = []
    public private(set) var watcherSet: Set<ConnectionHandle> = []
    /// Watching connections per user; its count is the event's `watcher_count`.
    public private(set) var watchingUsers: [String: Int] = [:]
    /// Open connections of the members, watching or not (kept by the engine). Only members' connections
    /// watch, so when this equals the watchers' count, no member has a connection that is not watching.
    public internal(set) var memberConnections = 0

    /// A connection watching the channel.
    public struct Watcher: Sendable, Hashable {
        public var connection: ConnectionHandle
        public var userID: String
        /// The user's place in the engine's totals (what `message.new` tells each watcher).
        public var totalsSlot: TotalsSlot
    }

    /// Puts ``memberOrder`` in join-time order, members who joined at the same time in the order they
    /// had: the order the engine keeps, for a channel whose rows were written in another order.
    mutating func orderMembersByJoinTime() {
        let joined = memberOrder.map { members[$0]?.createdAt ?? Timestamp(rawValue: .min) }
        guard zip(joined, joined.dropFirst()).contains(where: { $0 > $1 }) else { return }
        memberOrder = memberOrder.indices.sorted { joined[$0] != joined[$1] ? joined[$0] < joined[$1] : $0 < $1 }.map { memberOrder[$0] }
    }

    /// Adds a watcher; false if the connection already watches.
    mutating func addWatcher(_ connection: ConnectionHandle, userID: String, totalsSlot: TotalsSlot) -> Bool {
        guard watcherSet.insert(connection).inserted else { return false }
        watchers.append(Watcher(connection: connection, userID: userID, totalsSlot: totalsSlot))
        watchingUsers[userID, default: 0] += 1
        return true
    }

    /// Forgets every watcher (a restored engine has no connection open yet, so nobody watches).
    mutating func removeAllWatchers() {
        watchers = []
        watcherSet = []
        watchingUsers = [:]
    }

    /// Removes a watcher; false if the connection did not watch.
    @discardableResult
    mutating func removeWatcher(_ connection: ConnectionHandle) -> Bool {
        guard watcherSet.remove(connection) != nil,
              let index = watchers.firstIndex(where: { $0.connection == connection }) else { return false }
        let userID = watchers.remove(at: index).userID
        watchingUsers[userID]! -= 1
        if watchingUsers[userID] == 0 { watchingUsers[userID] = nil }
        return true
    }

    public init(cid: ChannelCID, createdBy: String?, createdAt: Timestamp) {
        self.cid = cid
        self.createdBy = createdBy
        self.createdAt = createdAt
        messages = MessageLog(cid: cid)
    }

    /// The newest message's time, or the channel's creation time.
    public var lastMessageAt: Timestamp? { messages.lastCreatedAt }

    /// Index of the last channel message (not thread-only) before `index`, if any: O(log n).
    func channelMessage(before index: Int) -> Int? {
        let count = channelMessagesBefore(index)
        return count > 0 ? channelMessagePositions[count - 1] : nil
    }

    /// How many channel messages (not thread-only) lie before `index`: where `index` would go in
    /// ``channelMessagePositions`` (which increases).
    func channelMessagesBefore(_ index: Int) -> Int {
        var low = 0
        var high = channelMessagePositions.count
        while low < high {
            let mid = (low + high) / 2
            if channelMessagePositions[mid] < index { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The first channel message created at or after `time`, if any: O(log n), since messages are
    /// created in time order.
    func firstChannelMessage(createdAtOrAfter time: Timestamp) -> Int? {
        var low = 0
        var high = channelMessagePositions.count
        while low < high {
            let mid = (low + high) / 2
            if messages.createdAt(at: channelMessagePositions[mid]) < time { low = mid + 1 } else { high = mid }
        }
        return low < channelMessagePositions.count ? channelMessagePositions[low] : nil
    }

    /// Messages after `position` that count as unread for `userID` (rule 4), recounted.
    public func countUnread(for userID: String, from position: Int) -> Int {
        var count = 0
        var index = position
        let author = messages.authorRef(of: userID)
        while index < messages.count {
            if messages.countsAsUnread(at: index, forAuthor: author) { count += 1 }
            index += 1
        }
        return count
    }

    /// Messages in `range` that count as unread for `userID` (rule 4).
    func countUnread(for userID: String, in range: Range<Int>) -> Int {
        var count = 0
        let author = messages.authorRef(of: userID)
        for index in range where messages.countsAsUnread(at: index, forAuthor: author) { count += 1 }
        return count
    }

    /// Whether at most `limit` channel messages lie at or after `index` (mark unread reaches only the
    /// last `limit`): O(log n).
    func isAmongLast(_ limit: Int, index: Int) -> Bool {
        channelMessagePositions.count - channelMessagesBefore(index) <= limit
    }
}
