import CheckmarkCore

/// The JSON of users recently written into events (`UserResponse`, as ``StreamJSON/write(user:into:includePrivacy:online:)``
/// writes it with its defaults), so that a user who acts again is not encoded again: every read
/// confirmation carries its reader twice, in `message.read` and `notification.mark_read`.
///
/// Holds at most ``capacity`` users, each of at most ``maxUserBytes`` of JSON (a larger user is
/// written afresh every time); a user who comes when it is full empties it first. So it keeps at most
/// 16 MiB of JSON (typically 250 bytes a user: 4 MB when full), and the users it was written from,
/// whose strings the engine's users mostly share. A stored form is used only for a user whose every field has the
/// same bytes as the one it was written from (not merely equal strings: Unicode-equivalent spellings
/// are different bytes on the wire), so a changed user is written afresh.
public struct UserJSONCache: Sendable {
    /// Most users kept: more than a node's active users, so that a busy node does not write its
    /// users again and again.
    public static let capacity = 16_384
    /// Largest user JSON kept, in bytes.
    public static let maxUserBytes = 1024

    /// By user id. (Each user has a place of their own: a table of slots chosen by hash made users
    /// sharing a slot replace each other, and at 10,000 active users most look-ups missed.)
    private var entries: [String: Entry] = [:]

    /// A class, so that a look-up retains one reference instead of copying every field.
    private final class Entry: Sendable {
        let user: User
        let json: [UInt8]

        init(user: User, json: [UInt8]) {
            self.user = user
            self.json = json
        }

        /// Whether this entry's JSON was written from `other`'s very bytes (read in place: passing
        /// the stored user to ``sameBytes(_:_:)`` copied it).
        func holds(_ other: User) -> Bool { UserJSONCache.sameBytes(user, other) }
    }

    public init() {}

    /// The JSON object of `user`, from the cache when the same user was written before.
    public mutating func json(for user: User) -> [UInt8] {
        if let entry = entries[user.id], entry.holds(user) { return entry.json }
        var writer = JSONWriter(capacity: 256)
        StreamJSON.write(user: user, into: &writer)
        guard writer.count <= Self.maxUserBytes else { return writer.bytes }
        if entries.count >= Self.capacity, entries[user.id] == nil { entries.removeAll(keepingCapacity: true) }
        entries[user.id] = Entry(user: user, json: writer.bytes)
        return writer.bytes
    }

    /// How many users the cache holds.
    package var keptUsers: Int { entries.count }

    /// Whether the two users write the same JSON: every field the same, strings byte for byte.
    static func sameBytes(_ a: User, _ b: User) -> Bool {
        same(a.id, b.id) && same(a.name, b.name) && same(a.image, b.image) && a.privacy == b.privacy
            && a.createdAt == b.createdAt && a.updatedAt == b.updatedAt && same(.object(a.custom), .object(b.custom))
    }

    /// Whether the two are the same bytes (not merely equal strings), or both nil.
    static func same(_ a: String?, _ b: String?) -> Bool {
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
