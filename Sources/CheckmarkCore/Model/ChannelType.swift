/// A channel type and the flags that apply to all its channels: receipts (contract rule 8), typing
/// and custom events.
public struct ChannelType: Sendable, Hashable {
    public var name: String
    /// `message.read` is emitted and others' read states are shown. Default true.
    public var readEvents: Bool
    /// Delivery confirmations are accepted and `message.delivered` emitted. Default false, as at Stream.
    public var deliveryEvents: Bool
    /// `typing.start` and `typing.stop` are fanned out (Stream's SDKs send them only when it is on).
    /// Default true, as at Stream.
    public var typingEvents: Bool
    /// Members may send custom events to the channel's watchers. Default true, as at Stream.
    public var customEvents: Bool
    public var createdAt: Timestamp
    public var updatedAt: Timestamp

    public init(name: String, readEvents: Bool = true, deliveryEvents: Bool = false, typingEvents: Bool = true, customEvents: Bool = true,
                createdAt: Timestamp = Timestamp(rawValue: 0), updatedAt: Timestamp? = nil) {
        self.name = name
        self.readEvents = readEvents
        self.deliveryEvents = deliveryEvents
        self.typingEvents = typingEvents
        self.customEvents = customEvents
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }

    /// The type that exists from the start.
    public static let messaging = ChannelType(name: "messaging")
}
