import CheckmarkCore

/// The member, read-state and message lists of recently written channel states, kept encoded so
/// that the next state of the same channel copies the entries that did not change instead of
/// encoding them again: a storm of watches of one large channel encodes its 100 listed members once,
/// not once per watcher. What is written is always exactly what encoding afresh would write: an entry
/// is reused only when everything it is written from (the user and its online flag, the read state
/// as others may see it, the message with its author and reply count) is equal.
///
/// Holds at most about `budgetBytes` (the `channel_state_cache` setting): kept in two generations, the
/// older dropped whole when the newer fills half the budget; a channel whose lists alone take more
/// than half is not kept. A budget of 0 keeps nothing. Used on one thread (the engine's).
public struct ChannelStateFragments: Sendable {
    /// The default budget: 16 MiB, about a hundred channels of 100 listed members.
    public static let defaultBudgetBytes = 16 << 20

    /// One channel's encoded lists.
    struct Lists: Sendable {
        var members = EncodedList<ListedMember>()
        var reads = EncodedList<ListedReadState>()
        var messages = EncodedList<ListedMessage>()

        var footprint: Int { members.footprint + reads.footprint + messages.footprint }
    }

    public let budgetBytes: Int
    private var newer: [ChannelCID: Lists] = [:]
    private var older: [ChannelCID: Lists] = [:]
    private var newerBytes = 0
    private var olderBytes = 0

    public init(budgetBytes: Int = defaultBudgetBytes) {
        self.budgetBytes = max(0, budgetBytes)
    }

    /// Bytes held, about.
    public var footprint: Int { newerBytes + olderBytes }
    /// Channels whose lists are kept.
    public var channelCount: Int { newer.count + older.count }

    /// Takes `cid`'s lists out (empty ones when none are kept); ``keep(_:for:)`` puts them back.
    mutating func take(_ cid: ChannelCID) -> Lists {
        if let lists = newer.removeValue(forKey: cid) {
            newerBytes -= lists.footprint
            return lists
        }
        if let lists = older.removeValue(forKey: cid) {
            olderBytes -= lists.footprint
            return lists
        }
        return Lists()
    }

    /// Drops `cid`'s lists (its channel left memory).
    public mutating func forget(_ cid: ChannelCID) {
        _ = take(cid)
    }

    /// Keeps `cid`'s lists within the budget.
    mutating func keep(_ lists: Lists, for cid: ChannelCID) {
        let size = lists.footprint
        let half = budgetBytes / 2
        guard size <= half else { return }
        if newerBytes + size > half {
            older = newer
            olderBytes = newerBytes
            newer = [:]
            newerBytes = 0
        }
        newer[cid] = lists
        newerBytes += size
    }
}
