/// The durable part of the receipts state: what storage keeps and loads back. Connections and watches
/// are not in it (they end with the process); unread counts and totals are not either (they follow
/// from the pointers and the messages, and are recomputed on restore).
package struct ReceiptsSnapshot: Sendable {
    package var users: [User]
    package var channelTypes: [ChannelType]
    /// Each channel with its members (read states), member order and messages in order.
    package var channels: [Channel]
    /// Counter behind generated message ids.
    package var generatedMessageIDs: Int
    /// The core's clock: restored so time never runs backwards across a restart.
    package var clock: Timestamp

    package init(users: [User] = [], channelTypes: [ChannelType] = [], channels: [Channel] = [],
                generatedMessageIDs: Int = 0, clock: Timestamp = Timestamp(rawValue: 0)) {
        self.users = users
        self.channelTypes = channelTypes
        self.channels = channels
        self.generatedMessageIDs = generatedMessageIDs
        self.clock = clock
    }
}
