/// What a member sends to a channel's watchers without it being stored (contract: typing and custom
/// events): never journaled, never replayed to a resuming client, lost with the node that held it.
public enum ChannelSignal: Sendable, Hashable {
    /// `typing.start`, in a thread when `parentID` is set.
    case typingStart(parentID: String?)
    /// `typing.stop`, in a thread when `parentID` is set.
    case typingStop(parentID: String?)
    /// A custom event: its type (never one of Stream's own, see ``isReservedType(_:)``) and the
    /// fields the sender gave it besides the type, as a JSON object.
    case custom(type: String, fields: JSONValue)

    /// The Stream event type.
    public var type: String {
        switch self {
        case .typingStart: "typing.start"
        case .typingStop: "typing.stop"
        case .custom(let type, _): type
        }
    }

    /// Whether the sender's own connections receive it: a custom event yes, typing no.
    public var reachesSender: Bool { Self.reachesSender(type: type) }

    /// ``reachesSender`` of a signal of `type`.
    public static func reachesSender(type: String) -> Bool {
        type != "typing.start" && type != "typing.stop"
    }

    /// The thread a typing signal is about.
    public var parentID: String? {
        switch self {
        case .typingStart(let parentID), .typingStop(let parentID): parentID
        case .custom: nil
        }
    }

    /// Whether `type` names an event Stream itself sends (`message.new`, `health.check`,
    /// `connection.changed`, ...) or Checkmark its answers (`reply`, `error`), which a client may not
    /// send as a custom event: every type Stream's API description lists (GetStream/protocol,
    /// `WSEvent`), its SDKs' local `connection.*` events, and any other type in the namespaces Stream
    /// reserves. `typing.*` are sent as typing, and `ai_indicator.*` (which backends send through
    /// this route) pass as custom events.
    public static func isReservedType(_ type: String) -> Bool {
        guard let dot = type.firstIndex(of: ".") else { return reservedTypes.contains(type) }
        return reservedNamespaces.contains(String(type[..<dot]))
    }

    /// Types without a namespace that the server sends: the gateway's answers to commands.
    static let reservedTypes: Set<String> = ["reply", "error"]

    /// The namespaces of Stream's own event types (GetStream/protocol's client-side description, and
    /// the SDKs' `connection.*`), besides `typing` and `ai_indicator`.
    static let reservedNamespaces: Set<String> = [
        "app", "channel", "connection", "draft", "health", "member", "message", "notification", "poll", "reaction",
        "reminder", "thread", "typing", "user", "user_group",
    ]
}
