/// Who an event is for, independent of which connections happen to be open when it is committed. The
/// journal keeps it with every event, so that a client resuming a channel gets exactly the events it
/// would have received had it stayed connected, and never a receipt privacy withheld from it.
public enum EventAudience: Sendable, Hashable {
    /// Every connection watching the event's channel.
    case watchers
    /// Every connection of this user, watching the channel or not (their own notifications).
    case user(String)
    /// Only this user's connections watching the channel (receipts their privacy settings keep to
    /// themselves: rules 6 and 7).
    case userWatching(String)
    /// Members with connections that do not watch the channel (`notification.message_new`): never part
    /// of a channel's resumed history, since a watcher gets `message.new` instead.
    case nonWatchingMembers
    /// Connections watching the channel whose users are among these (a thread read: the thread's
    /// other participants).
    case watchersAmong([String])
    /// Every connection of a thread's participants other than a reply's author, watching the channel
    /// or not (`notification.thread_message_new`): never part of a channel's resumed history, so the
    /// journal needs no list of them.
    case threadParticipants

    /// The one user it is kept to (`user`, `userWatching`), or nil.
    public var restrictedTo: String? {
        switch self {
        case .user(let id), .userWatching(let id): id
        case .watchers, .nonWatchingMembers, .watchersAmong, .threadParticipants: nil
        }
    }

    /// Whether a resume can replay an event of this audience to anyone: not when it is for members
    /// that do not watch (a resume is a watch). The journal keeps such an event's sequence, not its JSON.
    public var isReplayable: Bool {
        switch self {
        case .watchers, .user, .userWatching, .watchersAmong: true
        case .nonWatchingMembers, .threadParticipants: false
        }
    }

    /// Whether a connection of `userID` watching the event's channel receives it.
    public func reachesWatcher(_ userID: String) -> Bool {
        switch self {
        case .watchers: true
        case .user(let id), .userWatching(let id): id == userID
        case .nonWatchingMembers, .threadParticipants: false
        case .watchersAmong(let users): users.contains(userID)
        }
    }

    /// Whether every connection of `userID` receives it live, whatever it watches: such an event,
    /// emitted while a connection was open, already reached it and is not replayed to it.
    public func reachesEveryConnection(of userID: String) -> Bool {
        if case .user(let id) = self { return id == userID }
        return false
    }

    /// The stored form: `watchers`, `user:<id>`, `user_watching:<id>`, `non_watching_members` or
    /// `watchers_among:` and a JSON array of user ids, or `thread_participants`.
    public var storedValue: String {
        switch self {
        case .watchers: "watchers"
        case .user(let id): "user:" + id
        case .userWatching(let id): "user_watching:" + id
        case .nonWatchingMembers: "non_watching_members"
        case .watchersAmong(let users):
            "watchers_among:" + String(decoding: {
                var w = JSONWriter()
                w.value(.array(users.map { .string($0) }))
                return w.bytes
            }(), as: UTF8.self)
        case .threadParticipants: "thread_participants"
        }
    }

    /// Reads ``storedValue``; nil for anything else.
    public init?(storedValue: String) {
        switch storedValue {
        case "watchers": self = .watchers
        case "non_watching_members": self = .nonWatchingMembers
        case "thread_participants": self = .threadParticipants
        default:
            if storedValue.hasPrefix("user:"), storedValue.count > 5 {
                self = .user(String(storedValue.dropFirst(5)))
            } else if storedValue.hasPrefix("user_watching:"), storedValue.count > 14 {
                self = .userWatching(String(storedValue.dropFirst(14)))
            } else if storedValue.hasPrefix("watchers_among:"),
                      let list = (try? JSONParser.parse(storedValue.dropFirst(15).utf8, limits: .stored))?.arrayValue {
                self = .watchersAmong(list.compactMap(\.stringValue))
            } else {
                return nil
            }
        }
    }
}
