/// The receipts rules of the contract as a pure state machine: state plus one command and the time it
/// happens at give the new state and exactly which events go to which connections. No I/O, no clock,
/// no randomness: the same commands at the same times give the same state and events.
public struct ReceiptsEngine: Sendable {
    /// Mark unread reaches only this many of the channel's newest messages.
    public static let markUnreadWindow = 100
    /// Read states listed in a channel response (rule 10).
    public static let readStateListLimit = 100

    public internal(set) var users = UserTable()
    public internal(set) var channelTypes: [String: ChannelType] = ["messaging": .messaging]
    /// Channels in memory.
    public internal(set) var channels: [ChannelCID: Channel] = [:]
    /// Channels left in storage until a command or a query needs them (``channelsToLoad(for:)``,
    /// ``install(_:)``). Every channel is in one of the two tables, never in both.
    public internal(set) var dormantChannels: [ChannelCID: DormantChannel] = [:]
    /// Channels each user is a member of.
    public internal(set) var membership: [String: Set<ChannelCID>] = [:]
    /// Open connections: their users, the channels they watch, and each user's in the order they opened.
    public internal(set) var connections = ConnectionTable()
    /// Each user's totals over all their channels, kept in step with every unread change, at the
    /// user's ``TotalsSlot``.
    var slotTotals: [UnreadCounts] = []
    /// Each user's slot in ``slotTotals`` (a user gets one when it first needs totals).
    var totalsSlots: [String: TotalsSlot] = [:]
    /// The latest time seen: commands given an earlier time are applied at this one, so the core's
    /// time never runs backwards even when the caller's clock does.
    public internal(set) var clock = Timestamp(rawValue: 0)
    /// The durable rows the last applied command changed (until ``takeFootprint(into:)`` takes them),
    /// noted at each place the engine changes one; each command starts a new record, so it never
    /// grows past one command's rows. The clock, moved by every command, is not noted: storage keeps
    /// it as the time of the newest journal entry. A refused command notes nothing: commands validate
    /// before they change anything.
    package internal(set) var touched = StateFootprint()
    /// Channels one connection may watch; one more is `too_many_watched_channels`. A setting of the
    /// server, not durable state (watches end with their connections).
    public var maxWatchedChannelsPerConnection = Int.max
    /// Open connections one user may have; one more is `too_many_connections`. A setting of the server
    /// (`max_connections_per_user`), counted per node: a connection opens where its socket is.
    public var maxConnectionsPerUser = Int.max
    /// Largest user profile (name, image and custom fields as stored), in bytes: it travels with
    /// every event and response that carries the user. Stream's limit for custom data is 5 KB. A
    /// setting of the server (`max_user_profile`); every node of a cluster must use the same.
    public var maxUserProfileBytes = ReceiptsEngine.defaultMaxUserProfileBytes
    public static let defaultMaxUserProfileBytes = 5 << 10
    /// Texts of each channel's newest messages held in memory (`message_window`); older ones are
    /// archived once storage confirmed them (``markMessagesDurable(_:)``). A setting of the server.
    public var messageWindow = ReceiptsEngine.defaultMessageWindow
    /// Reaction types one user may have on one message; one more is `invalid_argument`. A setting of
    /// the server (`max_reactions_per_user`); every node of a cluster must use the same.
    public var maxReactionsPerUser = ReceiptsEngine.defaultMaxReactionsPerUser
    public static let defaultMessageWindow = 100

    public init() {}

    /// Applies one command at `time`, or at ``clock`` when `time` is earlier.
    /// - Returns: the outcome, or the reason the command was refused (state unchanged).
    public mutating func apply(_ command: ReceiptsCommand, at time: Timestamp) -> Result<ReceiptsOutcome, ReceiptsError> {
        apply(command, at: time, exactly: false)
    }

    /// Applies a command as the engine that first applied it did, at `time`, the time that engine
    /// applied it at (a journal entry's), even when this engine's ``clock`` is past it: the commands
    /// of other channels may have reached this engine in another order, and must not change the times
    /// this one's state records.
    /// - Returns: the outcome, or the reason the command was refused (state unchanged).
    public mutating func replay(_ command: ReceiptsCommand, at time: Timestamp) -> Result<ReceiptsOutcome, ReceiptsError> {
        apply(command, at: time, exactly: true)
    }

    private mutating func apply(_ command: ReceiptsCommand, at time: Timestamp, exactly: Bool) -> Result<ReceiptsOutcome, ReceiptsError> {
        if !dormantChannels.isEmpty {
            do throws(ReceiptsError) {
                let dormant = try channelsToLoad(for: command)
                if !dormant.isEmpty { return .failure(.channelsNotLoaded(dormant)) }
            } catch {
                clock = max(time, clock)  // as a refusal by the command itself
                return .failure(error)
            }
        }
        let now = exactly ? time : max(time, clock)
        if !touched.isEmpty { touched.removeAll(keepingCapacity: true) }
        clock = max(now, clock)
        do throws(ReceiptsError) {
            switch command {
            case .upsertUser(let user): return .success(try upsertUser(user, at: now))
            case .updateUser(let patch): return .success(try updateUser(patch, at: now))
            case .createChannelType(let type): return .success(try createChannelType(type, at: now))
            case .updateChannelType(let name, let read, let delivery, let typing, let custom):
                return .success(try updateChannelType(name, readEvents: read, deliveryEvents: delivery, typingEvents: typing,
                                                      customEvents: custom, at: now))
            case .createChannel(let cid, let createdBy, let members):
                return .success(try createChannel(cid, createdBy: createdBy, members: members, at: now))
            case .addMembers(let cid, let ids): return .success(try addMembers(cid, ids, at: now))
            case .removeMembers(let cid, let ids): return .success(try removeMembers(cid, ids))
            case .connect(let connection, let user): return .success(try connect(connection, user))
            case .disconnect(let connection): return .success(disconnect(connection))
            case .watch(let connection, let cid): return .success(try watch(connection, cid))
            case .stopWatching(let connection, let cid): return .success(try stopWatching(connection, cid))
            case .sendMessage(let cid, let user, let draft): return .success(try sendMessage(cid, user, draft, at: now))
            case .updateMessage(let cid, let messageID, let text, let editor):
                return .success(try updateMessage(cid, messageID, text: text, by: editor, at: now))
            case .deleteMessage(let cid, let messageID, let hard, let editor):
                return .success(try deleteMessage(cid, messageID, hard: hard, by: editor, at: now))
            case .sendReaction(let cid, let messageID, let user, let type, let score, let unique):
                return .success(try sendReaction(cid, messageID, userID: user, type: type, score: score, enforceUnique: unique, at: now))
            case .deleteReaction(let cid, let messageID, let user, let type):
                return .success(try deleteReaction(cid, messageID, userID: user, type: type, at: now))
            case .markRead(let cid, let user, let messageID):
                return .success(try markRead([ChannelReadTarget(cid: cid, messageID: messageID)], user: user, allChannels: false, at: now))
            case .markReadMany(let user, let targets):
                return .success(try markReadMany(user, targets, at: now))
            case .markThreadRead(let cid, let user, let parentID):
                return .success(try markThreadRead(cid, user, parentID, at: now))
            case .markUnread(let cid, let user, let target): return .success(try markUnread(cid, user, target, at: now))
            case .markDelivered(let user, let latest): return .success(try markDelivered(user, latest, at: now))
            }
        } catch {
            return .failure(error)
        }
    }

    // MARK: Look-ups shared by the commands

    func user(_ id: String) throws(ReceiptsError) -> User {
        guard let user = users[id] else { throw .unknownUser(id) }
        return user
    }

    /// The channel `cid` in memory. A dormant one: `channelsNotLoaded` (the caller loads it and asks
    /// again); none: `unknownChannel`.
    public func channel(_ cid: ChannelCID) throws(ReceiptsError) -> Channel {
        guard let channel = channels[cid] else {
            throw dormantChannels[cid] == nil ? .unknownChannel(cid) : .channelsNotLoaded([cid])
        }
        return channel
    }

    /// The channel `cid` as a channel query lists it, in memory or dormant; nil when there is none.
    public func listing(of cid: ChannelCID) -> ChannelListing? {
        if let channel = channels[cid] { return .resident(channel) }
        return dormantChannels[cid].map(ChannelListing.dormant)
    }

    /// Every channel's cid, in memory or dormant.
    public var allChannelIDs: Set<ChannelCID> {
        Set(channels.keys).union(dormantChannels.keys)
    }

    func member(_ userID: String, of channel: Channel) throws(ReceiptsError) -> Member {
        guard let member = channel.members[userID] else { throw .notAMember(user: userID, cid: channel.cid) }
        return member
    }

    func type(of channel: Channel) -> ChannelType { type(of: channel.cid) }

    /// The channel type of `cid`: its configured one, or the defaults.
    func type(of cid: ChannelCID) -> ChannelType {
        channelTypes[cid.type] ?? ChannelType(name: cid.type)
    }

    /// Each user's totals over all their channels, for the users that have had any.
    public var totals: [String: UnreadCounts] {
        totalsSlots.mapValues { slotTotals[Int($0.index)] }
    }

    /// The user's current totals.
    public func counts(for userID: String) -> UnreadCounts {
        totalsSlots[userID].map { slotTotals[Int($0.index)] } ?? UnreadCounts()
    }

    /// The totals at a slot the engine gave.
    func counts(at slot: TotalsSlot) -> UnreadCounts {
        slotTotals[Int(slot.index)]
    }

    /// The user's slot in the totals, given now if the user has none.
    mutating func totalsSlot(of userID: String) -> TotalsSlot {
        if let slot = totalsSlots[userID] { return slot }
        let slot = TotalsSlot(index: Int32(slotTotals.count))
        slotTotals.append(UnreadCounts())
        totalsSlots[userID] = slot
        return slot
    }

    /// Keeps a user's totals in step with a change of one channel's unread count.
    mutating func adjustTotals(of userID: String, from old: Int, to new: Int) {
        guard old != new else { return }
        adjustTotals(at: totalsSlot(of: userID), from: old, to: new)
    }

    /// As ``adjustTotals(of:from:to:)`` for a slot the engine gave: no look-up of the user.
    mutating func adjustTotals(at slot: TotalsSlot, from old: Int, to new: Int) {
        guard old != new else { return }
        slotTotals[Int(slot.index)].adjust(unreadFrom: old, to: new)
    }

    mutating func adjustTotals(of userID: String, _ change: Channel.UnreadChange?) {
        if let change { adjustTotals(of: userID, from: change.old, to: change.new) }
    }

    /// Keeps a participant's count of threads with unread replies in step with one thread's change.
    mutating func adjustThreadTotals(_ change: Channel.ThreadChange) {
        let (old, new) = (change.old, change.new)
        guard (old == 0) != (new == 0) else { return }
        let slot = totalsSlot(of: change.userID)
        slotTotals[Int(slot.index)].unreadThreads += new > 0 ? 1 : -1
    }

    /// Connections of `userID`, in the order they opened.
    public func connections(of userID: String) -> UserConnections {
        UserConnections(slots: connections.slots, first: users.firstConnection(of: userID))
    }

    /// Refuses another connection of `userID` once they have ``maxConnectionsPerUser`` open, counting
    /// `opening` more that a shell has admitted and not connected yet (`connect` checks with none; a
    /// shell asks first, before it acts on a connection's behalf).
    public func checkConnectionLimit(of userID: String, opening: Int = 0) throws(ReceiptsError) {
        guard maxConnectionsPerUser < Int.max, connections(of: userID).count + opening >= maxConnectionsPerUser else { return }
        throw .tooManyConnections(user: userID, limit: maxConnectionsPerUser)
    }

    /// The ids of `userID`'s open connections, in the order they opened.
    public func connectionIDs(of userID: String) -> [String] {
        connections(of: userID).map { connections.id(of: $0) }
    }

    /// Whether `userID` has a connection open (Stream's `online`).
    public func isOnline(_ userID: String) -> Bool {
        users.firstConnection(of: userID) != ConnectionTable.none
    }
}

extension ReceiptsEngine {
    /// The channels holding a message of this id, oldest message first (empty for an unknown id).
    /// Ids are unique within a channel only (a global check would tell a user that an id is taken
    /// in a channel it cannot see). Asks each channel's index: a global one cost more memory per
    /// message than the message's own fields, for a rare look-up.
    /// Only channels in `scope` are looked in (every channel when nil); dormant ones there:
    /// `channelsNotLoaded` (the caller loads them and asks again).
    public func channels(holdingMessage id: String, among scope: Set<ChannelCID>? = nil) throws(ReceiptsError) -> [ChannelCID] {
        let dormant = scope.map { $0.filter { dormantChannels[$0] != nil } } ?? Set(dormantChannels.keys)
        guard dormant.isEmpty else { throw .channelsNotLoaded(dormant.sorted()) }
        var holding: [(at: Timestamp, cid: ChannelCID)] = []
        for index in channels.indices where scope?.contains(channels.keys[index]) ?? true {
            if let position = channels.values[index].messages.position(of: id) {
                holding.append((channels.values[index].messages.createdAt(at: position), channels.keys[index]))
            }
        }
        return holding.sorted { $0.at != $1.at ? $0.at < $1.at : $0.cid < $1.cid }.map(\.cid)
    }
}
