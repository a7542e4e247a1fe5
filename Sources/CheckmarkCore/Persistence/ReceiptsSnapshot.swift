/// The durable part of the receipts state: what storage keeps and loads back. Connections and watches
/// are not in it (they end with the process); unread counts and totals are not either (they follow
/// from the pointers and the messages, and are recomputed on restore).
public struct ReceiptsSnapshot: Sendable {
    public var users: [User]
    public var channelTypes: [ChannelType]
    /// Each channel with its members (read states), member order and messages in order.
    public var channels: [Channel]
    /// Counter behind generated message ids.
    public var generatedMessageIDs: Int
    /// The core's clock: restored so time never runs backwards across a restart.
    public var clock: Timestamp

    public init(users: [User] = [], channelTypes: [ChannelType] = [], channels: [Channel] = [],
                generatedMessageIDs: Int = 0, clock: Timestamp = Timestamp(rawValue: 0)) {
        self.users = users
        self.channelTypes = channelTypes
        self.channels = channels
        self.generatedMessageIDs = generatedMessageIDs
        self.clock = clock
    }
}
