import CheckmarkCore

/// The JSON of users recently written into events (`UserResponse`, as ``StreamJSON/write(user:into:includePrivacy:online:)``
/// writes it with its defaults), so that a user who acts again is not encoded again: every read
/// confirmation carries its reader twice, in `message.read` and `notification.mark_read`.
///
/// Holds at most ``capacity`` users, each of at most ``maxUserBytes`` of JSON (a larger user is
/// written afresh every time): a 32 KB table, and per user kept a copy of the user and its JSON,
/// so about 4 MB of JSON at most. A user's slot is
/// chosen by its id, and a user whose slot is taken replaces the one there. A stored form is used
/// only for a user whose every field has the same bytes as the one it was written from (not merely
/// equal strings: Unicode-equivalent spellings are different bytes on the wire), so a changed user
/// is written afresh. The slots are allocated at the first store.
public struct UserJSONCache: Sendable {
    /// Most users kept.
    public static let capacity = 4096
    /// Largest user JSON kept, in bytes.
    public static let maxUserBytes = 1024

    private var slots: [Slot?] = []

    /// A class, so that looking a user up retains one reference instead of copying every field.
    private final class Slot: Sendable {
        let user: User
        let json: [UInt8]

        init(user: User, json: [UInt8]) {
            self.user = user
            self.json = json
        }

        /// Whether this slot's JSON was written from `other`'s very bytes (read in place: passing the
        /// stored user to ``sameBytes(_:_:)`` copied it).
        func holds(_ other: User) -> Bool { UserJSONCache.sameBytes(user, other) }
    }

    public init() {}

    /// The JSON object of `user`, from the cache when the same user was written before.
    public mutating func json(for user: User) -> [UInt8] {
        let index = Int(UInt(bitPattern: user.id.hashValue) % UInt(Self.capacity))
        if index < slots.count, let slot = slots[index], slot.holds(user) { return slot.json }
        var writer = JSONWriter(capacity: 256)
        StreamJSON.write(user: user, into: &writer)
        guard writer.count <= Self.maxUserBytes else { return writer.bytes }
        if slots.isEmpty { slots = Array(repeating: nil, count: Self.capacity) }
        slots[index] = Slot(user: user, json: writer.bytes)
        return writer.bytes
    }

    /// How many users the cache holds.
    package var keptUsers: Int { slots.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }

    /// Whether the two users write the same JSON: every field the same, strings byte for byte.
    static func sameBytes(_ a: User, _ b: User) -> Bool {
        same(a.id, b.id) && same(a.name, b.name) && same(a.image, b.image) && a.privacy == b.privacy
            && a.createdAt == b.createdAt && a.updatedAt == b.updatedAt && same(.object(a.custom), .object(b.custom))
    }

    private static func same(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): a.utf8.elementsEqual(b.utf8)
        case (nil, _?), (_?, nil): false
        }
    }

    private static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): same(a, b)
        case (.array(let a), .array(let b)): a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { same($0.0, $1.0) && same($0.1, $1.1) }
        case (.null, _), (.bool, _), (.number, _), (.string, _), (.array, _), (.object, _): false
        }
    }
}
