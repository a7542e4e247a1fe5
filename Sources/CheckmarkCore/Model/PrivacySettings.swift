/// What a user lets others see (contract rules 6 and 7, and typing). All default to enabled.
public struct PrivacySettings: Sendable, Hashable {
    /// When false, no `message.read` about this user reaches anyone else and their read state is
    /// never shown to others.
    public var readReceipts: Bool
    /// When false, no `message.delivered` about this user reaches anyone else and their delivery
    /// state is never shown to others.
    public var deliveryReceipts: Bool
    /// When false, no `typing.start` or `typing.stop` of this user reaches anyone (Stream's
    /// `typing_indicators`).
    public var typingIndicators: Bool

    public init(readReceipts: Bool = true, deliveryReceipts: Bool = true, typingIndicators: Bool = true) {
        self.readReceipts = readReceipts
        self.deliveryReceipts = deliveryReceipts
        self.typingIndicators = typingIndicators
    }
}
