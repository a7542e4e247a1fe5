/// A user of the app (contract: Entities).
public struct User: Sendable, Hashable {
    public var id: String
    public var name: String?
    public var image: String?
    /// Custom fields, kept in the order given.
    public var custom: [(String, JSONValue)]
    public var privacy: PrivacySettings
    public var createdAt: Timestamp
    public var updatedAt: Timestamp

    public init(id: String, name: String? = nil, image: String? = nil, custom: [(String, JSONValue)] = [],
                privacy: PrivacySettings = .init(), createdAt: Timestamp = Timestamp(rawValue: 0), updatedAt: Timestamp? = nil) {
        self.id = id
        self.name = name
        self.image = image
        self.custom = custom
        self.privacy = privacy
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }

    public static func == (lhs: User, rhs: User) -> Bool {
        lhs.id == rhs.id && lhs.name == rhs.name && lhs.image == rhs.image && lhs.privacy == rhs.privacy
            && lhs.createdAt == rhs.createdAt && lhs.updatedAt == rhs.updatedAt
            && JSONValue.object(lhs.custom) == JSONValue.object(rhs.custom)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(privacy)
    }

    /// Reserved fields a client may set about itself (at connect, in `user_details`).
    public static let settableAtConnect: Set<String> = ["name", "image", "privacy_settings"]

    /// Field names a user object reserves; custom fields may not use them.
    public static let reservedFields: Set<String> = [
        "id", "name", "image", "privacy_settings", "role", "created_at", "updated_at", "online",
        "unread_count", "total_unread_count", "unread_channels", "unread_threads", "custom", "banned", "language",
        "teams", "blocked_user_ids", "invisible", "devices", "mutes", "channel_mutes",
    ]
}
