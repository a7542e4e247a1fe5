/// A channel type and the receipt flags that apply to all its channels (contract rule 8).
public struct ChannelType: Sendable, Hashable {
    public var name: String
    /// `message.read` is emitted and others' read states are shown. Default true.
    public var readEvents: Bool
    /// Delivery confirmations are accepted and `message.delivered` emitted. Default false, as at Stream.
    public var deliveryEvents: Bool
    public var createdAt: Timestamp
    public var updatedAt: Timestamp

    public init(name: String, readEvents: Bool = true, deliveryEvents: Bool = false,
                createdAt: Timestamp = Timestamp(rawValue: 0), updatedAt: Timestamp? = nil) {
        self.name = name
        self.readEvents = readEvents
        self.deliveryEvents = deliveryEvents
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }

    /// The type that exists from the start.
    public static let messaging = ChannelType(name: "messaging")
}
