/// The durable part of the receipts state: what storage keeps and loads back. Connections and watches
/// are not in it (they end with the process); totals are not either (they are summed again on restore).
package struct ReceiptsSnapshot: Sendable {
    package var users: [User]
    package var channelTypes: [ChannelType]
    /// Each channel with its members (read states), member order and messages in order.
    package var channels: [Channel]
    /// Channels left in storage until first needed (``DormantChannel``).
    package var dormantChannels: [DormantChannel]
    /// The core's clock: restored so time never runs backwards across a restart.
    package var clock: Timestamp

    package init(users: [User] = [], channelTypes: [ChannelType] = [], channels: [Channel] = [], dormantChannels: [DormantChannel] = [],
                clock: Timestamp = Timestamp(rawValue: 0)) {
        self.users = users
        self.channelTypes = channelTypes
        self.channels = channels
        self.dormantChannels = dormantChannels
        self.clock = clock
    }
}
