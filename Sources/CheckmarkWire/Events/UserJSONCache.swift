import CheckmarkCore

/// The JSON of users recently written into events (`UserResponse`, as ``StreamJSON/write(user:into:includePrivacy:online:)``
/// writes it with its defaults), so that a user who acts again is not encoded again: every read
/// confirmation carries its reader twice, in `message.read` and `notification.mark_read`.
///
/// Holds at most ``capacity`` users. A user's slot is chosen by its id, and a user whose slot is
/// taken replaces the one there. A stored form is used only for a user equal in every field to the
/// one it was written from, so a changed user (name, custom fields, privacy, `updated_at`) is
/// written afresh. The slots are allocated at the first store.
public struct UserJSONCache: Sendable {
    /// Most users kept: about 370 KB of slots, plus each user's JSON.
    public static let capacity = 4096

    private var slots: [Slot?] = []

    private struct Slot: Sendable {
        var user: User
        var json: [UInt8]
    }

    public init() {}

    /// The JSON object of `user`, from the cache when the same user was written before.
    public mutating func json(for user: User) -> [UInt8] {
        let index = Int(UInt(bitPattern: user.id.hashValue) % UInt(Self.capacity))
        if index < slots.count, let slot = slots[index], slot.user == user { return slot.json }
        var writer = JSONWriter(capacity: 256)
        StreamJSON.write(user: user, into: &writer)
        if slots.isEmpty { slots = Array(repeating: nil, count: Self.capacity) }
        slots[index] = Slot(user: user, json: writer.bytes)
        return writer.bytes
    }
}
