/// What happened to a message after it was sent: its last edit and its deletion (rules M1-M6 of
/// docs/protocol.md). A message never edited nor deleted has none.
public struct MessageRevision: Sendable, Hashable {
    /// The last edit or deletion (Stream's `updated_at`).
    public var updatedAt: Timestamp
    /// The last edit that changed the text (Stream's `message_text_updated_at`); nil while the text is
    /// the one sent.
    public var textUpdatedAt: Timestamp?
    /// When the message was deleted (Stream's `deleted_at`; its `type` is then `deleted`).
    public var deletedAt: Timestamp?
    /// Deleted with `hard`: its text is erased as well (rule M5).
    public var hardDeleted: Bool

    public init(updatedAt: Timestamp, textUpdatedAt: Timestamp? = nil, deletedAt: Timestamp? = nil, hardDeleted: Bool = false) {
        self.updatedAt = updatedAt
        self.textUpdatedAt = textUpdatedAt
        self.deletedAt = deletedAt
        self.hardDeleted = hardDeleted
    }

    public var isDeleted: Bool { deletedAt != nil }
}
