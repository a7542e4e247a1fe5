/// Typing and custom events as the core decides them (contract: typing and custom events): who
/// receives a signal, and who is shown typing where, so that a `typing.stop` ends exactly what a
/// delivered `typing.start` began and a connection that closes while typing ends it for everyone.
/// Pure: the engine's state and the time come in, deliveries come out.
///
/// The rules, each decided for the very next signal (rule 9):
/// - Only a member may send a signal to a channel (`not_a_member` otherwise).
/// - `typing.start` reaches the channel's watchers other than the sender's own connections, unless
///   the sender's `typing_indicators` or the channel type's `typing_events` is off: then nobody.
/// - `typing.stop` reaches the same watchers when it ends a `typing.start` they were shown (whatever
///   the settings are now: it only takes back what was shown), and otherwise as a `typing.start` would.
/// - A connection that closes while it is shown typing (its `typing.start` not stopped) sends that
///   user's `typing.stop` for it, unless another of the user's connections is typing there too.
/// - A custom event reaches every watcher of the channel, the sender's connections included; the
///   channel type's `custom_events` off refuses it (`not_allowed`).
/// - A `typing.start` not repeated within ``typingMemory`` is forgotten without a stop: Stream's
///   clients stop showing it after 7 s of silence on their own.
public struct ChannelSignals: Sendable {
    /// Who is shown typing: a channel, a user and the thread (nil: the channel itself).
    struct TypingKey: Hashable, Sendable {
        var cid: ChannelCID
        var userID: String
        var parentID: String?
    }

    /// A user shown typing: the connections that sent the `typing.start` (the empty string for one
    /// sent without a connection) and when the last one was.
    struct Shown: Sendable {
        var connections: Set<String>
        var lastStart: Timestamp
    }

    /// How long, in microseconds, a `typing.start` is remembered without being repeated.
    public var typingMemory: Int64 = 30_000_000
    private var shown: [TypingKey: Shown] = [:]
    private var keysOfConnection: [String: Set<TypingKey>] = [:]
    /// Every remembered start in the order it came, to forget them in that order (an entry whose
    /// key started again since is passed over).
    private var starts: [(key: TypingKey, at: Timestamp)] = []
    private var firstStart = 0

    public init() {}

    /// Users shown typing, over all channels and threads.
    public var typingCount: Int { shown.count }

    /// Decides `signal` of `userID` in `cid`, sent over `connectionID` (nil: without one), at `now`.
    /// - Throws: `unknown_user`, `unknown_channel`, `not_a_member`; `not_allowed` for a custom event
    ///   in a channel type with `custom_events` off; `channelsNotLoaded` for a dormant channel (the
    ///   caller loads it and asks again).
    public mutating func decide(_ signal: ChannelSignal, from userID: String, in cid: ChannelCID, connectionID: String?,
                                engine: ReceiptsEngine, at now: Timestamp) throws(ReceiptsError) -> SignalDelivery {
        forget(before: now)
        let user = try engine.user(userID)
        let channel = try engine.channel(cid)
        _ = try engine.member(userID, of: channel)
        let type = engine.type(of: channel)
        switch signal {
        case .custom:
            guard type.customEvents else {
                throw .notAllowed("custom events are off for channel type \(type.name) (custom_events)")
            }
            return SignalDelivery(signal: signal, cid: cid, user: user, createdAt: now,
                                  recipients: engine.signalRecipients(of: channel, excluding: signal.reachesSender ? nil : userID))
        case .typingStart(let parentID):
            let key = TypingKey(cid: cid, userID: userID, parentID: parentID)
            if let suppressed = Self.typingSuppression(user, type) {
                return SignalDelivery(signal: signal, cid: cid, user: user, createdAt: now, recipients: [], suppressed: suppressed)
            }
            let connection = connectionID ?? ""
            shown[key, default: Shown(connections: [], lastStart: now)].connections.insert(connection)
            shown[key]!.lastStart = now
            if connectionID != nil { keysOfConnection[connection, default: []].insert(key) }
            starts.append((key, now))
            return SignalDelivery(signal: signal, cid: cid, user: user, createdAt: now,
                                  recipients: engine.signalRecipients(of: channel, excluding: signal.reachesSender ? nil : userID))
        case .typingStop(let parentID):
            let key = TypingKey(cid: cid, userID: userID, parentID: parentID)
            if end(key) == nil, let suppressed = Self.typingSuppression(user, type) {
                return SignalDelivery(signal: signal, cid: cid, user: user, createdAt: now, recipients: [], suppressed: suppressed)
            }
            return SignalDelivery(signal: signal, cid: cid, user: user, createdAt: now,
                                  recipients: engine.signalRecipients(of: channel, excluding: userID))
        }
    }

    /// The connection `connectionID` closed (the engine has forgotten it): the `typing.stop` of each
    /// place it was shown typing that no other connection of its user types in, to that place's
    /// watchers. Places whose channel left memory, or whose user is gone, are dropped.
    public mutating func connectionClosed(_ connectionID: String, engine: ReceiptsEngine, at now: Timestamp) -> [SignalDelivery] {
        forget(before: now)
        guard let keys = keysOfConnection.removeValue(forKey: connectionID) else { return [] }
        var stops: [SignalDelivery] = []
        for key in keys.sorted(by: { ($0.cid, $0.userID, $0.parentID ?? "") < ($1.cid, $1.userID, $1.parentID ?? "") }) {
            guard var entry = shown[key] else { continue }
            entry.connections.remove(connectionID)
            guard entry.connections.isEmpty else {
                shown[key] = entry
                continue
            }
            shown[key] = nil
            guard let user = engine.users[key.userID], let channel = engine.channels[key.cid] else { continue }
            stops.append(SignalDelivery(signal: .typingStop(parentID: key.parentID), cid: key.cid, user: user, createdAt: now,
                                        recipients: engine.signalRecipients(of: channel, excluding: key.userID)))
        }
        return stops
    }

    /// Why the typing of `user` in a channel of `type` reaches nobody, if it does not.
    private static func typingSuppression(_ user: User, _ type: ChannelType) -> SignalSuppression? {
        if !user.privacy.typingIndicators { return .senderPrivacy }
        if !type.typingEvents { return .channelType }
        return nil
    }

    /// Ends `key`'s typing: what was shown, or nil.
    private mutating func end(_ key: TypingKey) -> Shown? {
        guard let entry = shown.removeValue(forKey: key) else { return nil }
        for connection in entry.connections where !connection.isEmpty {
            keysOfConnection[connection]?.remove(key)
            if keysOfConnection[connection]?.isEmpty == true { keysOfConnection[connection] = nil }
        }
        return entry
    }

    /// Forgets the typing not started again since `now - typingMemory`.
    private mutating func forget(before now: Timestamp) {
        let horizon = Timestamp(rawValue: now.rawValue - typingMemory)
        while firstStart < starts.count, starts[firstStart].at < horizon {
            let (key, at) = starts[firstStart]
            firstStart += 1
            if let entry = shown[key], entry.lastStart <= at { _ = end(key) }
        }
        // The list is compacted once most of it is passed: it holds at most twice the starts of one memory.
        if firstStart > 64, firstStart * 2 > starts.count {
            starts.removeFirst(firstStart)
            firstStart = 0
        }
    }
}
