/// An event the core decided to emit, with exactly the connections that receive it now (possibly
/// none: channel receipts and a user's own notifications are emitted, and journaled, even when no
/// connection is open to receive them, so that a client that resumes later gets them).
public struct ReceiptsEvent: Sendable, Hashable {
    public var payload: ReceiptsEventPayload
    /// Absent only for mark-all-read.
    public var cid: ChannelCID?
    public var createdAt: Timestamp
    /// Receivers in a deterministic order, possibly none; counts are set when the event type carries them.
    public var recipients: [Recipient]

    public init(payload: ReceiptsEventPayload, cid: ChannelCID?, createdAt: Timestamp, recipients: [Recipient]) {
        self.payload = payload
        self.cid = cid
        self.createdAt = createdAt
        self.recipients = recipients
    }

    /// The Stream event type.
    public var type: String { payload.type }

    /// Whether a resume can replay the event to anyone: ``audience``'s ``EventAudience/isReplayable``,
    /// told from the payload's kind alone (no audience is made for it).
    public var isReplayable: Bool {
        switch payload {
        case .notificationMessageNew, .notificationThreadMessageNew: false
        case .messageNew, .messageUpdated, .messageDeleted, .reaction, .messageRead, .messageDelivered, .notificationMarkRead,
             .notificationMarkUnread: true
        }
    }

    /// Who the event is for, decided with the privacy settings it was emitted under.
    public var audience: EventAudience {
        switch payload {
        case .messageNew, .messageUpdated, .messageDeleted, .reaction: .watchers
        case .notificationMessageNew: .nonWatchingMembers
        case .notificationThreadMessageNew: .threadParticipants
        case .messageRead(let user, _, let thread?):
            // A thread read tells the thread's other participants, and nobody when it is private.
            .watchersAmong(user.privacy.readReceipts ? thread.participants.filter { $0 != user.id } : [])
        case .messageRead(let user, _, nil): user.privacy.readReceipts ? .watchers : .userWatching(user.id)
        case .messageDelivered(let user, _, _): user.privacy.deliveryReceipts ? .watchers : .userWatching(user.id)
        case .notificationMarkRead(let user, _, _, _), .notificationMarkUnread(let user, _, _, _, _): .user(user.id)
        }
    }
}

/// One receiving connection and what varies for it.
public struct Recipient: Sendable, Hashable {
    /// What the shells deliver by: valid while the connection is open (see ``ConnectionHandle``).
    public var connection: ConnectionHandle
    /// The connection's id, for traces and replays.
    public var connectionID: String
    public var userID: String
    /// The recipient user's totals, for event types that carry them.
    public var counts: UnreadCounts?

    public init(connection: ConnectionHandle, connectionID: String, userID: String, counts: UnreadCounts?) {
        self.connection = connection
        self.connectionID = connectionID
        self.userID = userID
        self.counts = counts
    }
}

/// What an event says, in Stream's terms (contract: Events and who receives them). Held out of line
/// (`indirect`): an event is copied several times on its way (outcome, sequencer, journal, fan-out),
/// and a copy of the inline payload moved its largest case (a user, a message and a channel summary,
/// about 420 bytes) with a retain for each of their fields.
public indirect enum ReceiptsEventPayload: Sendable, Hashable {
    case messageNew(message: Message, sender: User, watcherCount: Int)
    /// `watcherCount` is the channel's, as in `message.new` (Stream's JavaScript SDK sets a loaded
    /// channel's count from any event that has one).
    case notificationMessageNew(message: Message, sender: User, channel: ChannelSummary, watcherCount: Int)
    /// A thread reply, for the thread's participants other than its author: what the SDKs' thread
    /// lists update their unread thread count and their "new replies" state from.
    case notificationThreadMessageNew(message: Message, sender: User, channel: ChannelSummary, watcherCount: Int)
    /// A message edited (rule M1): `by` is who edited it (its sender, for the server). `replyCount`
    /// is its thread's size, for a parent (the SDKs replace their copy of the message with this one).
    case messageUpdated(message: Message, sender: User, by: User, replyCount: Int)
    /// A message deleted (rules M4, M5), `hard` with its text erased.
    case messageDeleted(message: Message, sender: User, by: User, hard: Bool, replyCount: Int)
    /// A reaction sent or taken back (rules R1-R4): `message` as it is after it (own reactions are
    /// each viewer's and are not in events), `user` who reacted.
    case reaction(ReactionChange, message: Message, sender: User, reaction: Reaction, user: User, channel: ChannelSummary, replyCount: Int)
    /// A channel read, or with `thread` a thread read.
    case messageRead(user: User, lastReadMessageID: String?, thread: ThreadSummary? = nil)
    case messageDelivered(user: User, lastDeliveredMessageID: String, lastDeliveredAt: Timestamp)
    /// A channel or thread read (`channel` set: what Stream's SDKs tell it from a mark-all-read by), or
    /// a mark-all-read (`channel` and the event's `cid` nil). `thread` is set for a thread read (the iOS
    /// SDK takes a read without it for the channel's).
    case notificationMarkRead(user: User, lastReadMessageID: String?, thread: ThreadSummary? = nil, channel: ChannelSummary?)
    case notificationMarkUnread(
        user: User, firstUnreadMessageID: String, lastReadMessageID: String?, lastReadAt: Timestamp,
        unreadMessages: Int)

    public var type: String {
        switch self {
        case .messageNew: "message.new"
        case .messageUpdated: "message.updated"
        case .messageDeleted: "message.deleted"
        case .reaction(let change, _, _, _, _, _, _): "reaction.\(change.rawValue)"
        case .notificationMessageNew: "notification.message_new"
        case .notificationThreadMessageNew: "notification.thread_message_new"
        case .messageRead: "message.read"
        case .messageDelivered: "message.delivered"
        case .notificationMarkRead: "notification.mark_read"
        case .notificationMarkUnread: "notification.mark_unread"
        }
    }

    /// Whether events of this Stream type carry the recipient's unread counts.
    public static func carriesCounts(type: String) -> Bool {
        switch type {
        case "message.new", "notification.message_new", "notification.thread_message_new", "notification.mark_read",
             "notification.mark_unread": true
        default: false
        }
    }

    /// The same event with `watcherCount` in place of the one the engine counted (a cluster node
    /// counts every node's watchers), for the events that carry one; `watcherCount` is asked only for those.
    public func counting(watchers watcherCount: @autoclosure () -> Int) -> ReceiptsEventPayload {
        switch self {
        case .messageNew(let message, let sender, _):
            .messageNew(message: message, sender: sender, watcherCount: watcherCount())
        case .notificationMessageNew(let message, let sender, let channel, _):
            .notificationMessageNew(message: message, sender: sender, channel: channel, watcherCount: watcherCount())
        case .notificationThreadMessageNew(let message, let sender, let channel, _):
            .notificationThreadMessageNew(message: message, sender: sender, channel: channel, watcherCount: watcherCount())
        case .messageUpdated, .messageDeleted, .reaction, .messageRead, .messageDelivered, .notificationMarkRead, .notificationMarkUnread:
            self
        }
    }

    /// Whether the event carries Stream's channel object (`channel`).
    public var carriesChannelObject: Bool {
        switch self {
        case .notificationMessageNew, .notificationThreadMessageNew, .reaction: true
        case .notificationMarkRead(_, _, _, let channel): channel != nil
        case .messageNew, .messageUpdated, .messageDeleted, .messageRead, .messageDelivered, .notificationMarkUnread: false
        }
    }

    /// The user whose receipt this event reveals, for read and delivery events.
    public var receiptSubject: String? {
        switch self {
        case .messageRead(let user, _, _), .messageDelivered(let user, _, _), .notificationMarkRead(let user, _, _, _),
            .notificationMarkUnread(let user, _, _, _, _):
            user.id
        case .messageNew, .messageUpdated, .messageDeleted, .reaction, .notificationMessageNew, .notificationThreadMessageNew:
            nil
        }
    }
}
