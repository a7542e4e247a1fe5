/// A message (contract: Entities).
public struct Message: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case regular
        case system
    }

    public var id: String
    public var cid: ChannelCID
    public var userID: String
    public var text: String
    public var kind: Kind
    /// Server time, strictly increasing within a channel.
    public var createdAt: Timestamp
    /// Set on thread replies.
    public var parentID: String?
    /// A thread reply also shown in the channel.
    public var showInChannel: Bool
    /// Silent messages never count as unread.
    public var silent: Bool
    /// Its last edit and its deletion; nil for a message as it was sent.
    public var revision: MessageRevision?
    /// Its reactions, oldest first (rules R1-R5).
    public var reactions: [Reaction] = []
    /// The users of its newest reactions (``latestReactionsLimit``), as they were when the message
    /// was handed out for an event (``ReceiptsEngine``); empty elsewhere, where writers look users up.
    public var reactionUsers: [String: User] = [:]

    /// Reactions listed in `latest_reactions` and `own_reactions` (Stream's number).
    public static let latestReactionsLimit = 10

    public init(id: String, cid: ChannelCID, userID: String, text: String, kind: Kind = .regular,
                createdAt: Timestamp, parentID: String? = nil, showInChannel: Bool = false, silent: Bool = false,
                revision: MessageRevision? = nil) {
        self.id = id
        self.cid = cid
        self.userID = userID
        self.text = text
        self.kind = kind
        self.createdAt = createdAt
        self.parentID = parentID
        self.showInChannel = showInChannel
        self.silent = silent
        self.revision = revision
    }

    /// Deleted (soft or hard): Stream's `type` is then `deleted`.
    public var isDeleted: Bool { revision?.isDeleted ?? false }

    /// Stream's `type`: `deleted` once deleted, else the kind it was sent as.
    public var streamType: String { isDeleted ? "deleted" : kind.rawValue }

    /// A thread reply not shown in the channel: never counted, never delivery-tracked (rules 4, 5).
    public var isThreadOnly: Bool { parentID != nil && !showInChannel }

    /// Part of the channel's message list.
    public var isChannelMessage: Bool { !isThreadOnly }

    /// Whether this message counts as unread for `userID` when it lies after their read pointer (rule 4).
    public func countsAsUnread(for userID: String) -> Bool {
        self.userID != userID && !isThreadOnly && !silent
    }

    /// Whether this reply counts as an unread reply of its thread for `userID` when it lies after their
    /// thread read pointer: replies from others that are not silent (`show_in_channel` ones included).
    public func countsAsUnreadReply(for userID: String) -> Bool {
        self.userID != userID && !silent
    }
}
