/// A signal as the engine decided it: what it says, who sent it, when, and exactly the connections
/// that receive it now (possibly none: suppressed by the sender's privacy or the channel type).
public struct SignalDelivery: Sendable {
    public var signal: ChannelSignal
    public var cid: ChannelCID
    public var user: User
    public var createdAt: Timestamp
    public var recipients: [Recipient]
    /// Why nobody receives it, when a rule kept it from everyone.
    public var suppressed: SignalSuppression?

    public init(signal: ChannelSignal, cid: ChannelCID, user: User, createdAt: Timestamp, recipients: [Recipient],
                suppressed: SignalSuppression? = nil) {
        self.signal = signal
        self.cid = cid
        self.user = user
        self.createdAt = createdAt
        self.recipients = recipients
        self.suppressed = suppressed
    }
}

/// Why a signal reached nobody.
public enum SignalSuppression: Sendable, Hashable {
    /// The sender's `privacy_settings.typing_indicators` is off.
    case senderPrivacy
    /// The channel type's `typing_events` is off.
    case channelType
}
