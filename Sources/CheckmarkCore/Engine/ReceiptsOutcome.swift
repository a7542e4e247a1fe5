/// What applying one command produced: the value the caller answers with and the events to send.
public struct ReceiptsOutcome: Sendable, Hashable {
    public var result: ReceiptsResult
    public var events: [ReceiptsEvent]
    /// False when the command changed no state (a duplicate confirmation, rule 1): nothing to store.
    public var changed: Bool

    public init(result: ReceiptsResult = .none, events: [ReceiptsEvent] = [], changed: Bool = true) {
        self.result = result
        self.events = events
        self.changed = changed
    }

    /// The outcome of a command that changed nothing.
    public static let unchanged = ReceiptsOutcome(changed: false)
}

/// The value a command returns.
public enum ReceiptsResult: Sendable, Hashable {
    case none
    case message(Message)
    /// A reaction sent or taken back, and its message after it.
    case reaction(Message, Reaction)
    case user(User)
    case channelType(ChannelType)
    /// Whether the channel was created by this command.
    case channel(ChannelCID, created: Bool)
}
