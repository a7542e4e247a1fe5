import CheckmarkCore

/// The `sort` of a channel query: `[{"field": f, "direction": 1 | -1}]`, applied in order, ties broken
/// by cid. Fields: `last_updated` (the default, newest first: the later of creation and last message),
/// `last_message_at`, `created_at`, `updated_at`, `member_count`, `cid`. Other fields are refused with
/// `invalid_argument`. Pure.
package struct ChannelOrder: Sendable, Equatable {
    package enum Field: String, Sendable, CaseIterable {
        case lastUpdated = "last_updated"
        case lastMessageAt = "last_message_at"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case memberCount = "member_count"
        case cid
    }

    package var keys: [(field: Field, ascending: Bool)]

    package static let `default` = ChannelOrder(keys: [(.lastUpdated, false)])

    package init(keys: [(field: Field, ascending: Bool)]) {
        self.keys = keys
    }

    package init(parsing json: JSONValue?) throws(WireError) {
        guard let json, json != .null else { self = .default; return }
        guard let entries = json.arrayValue else { throw .invalid("sort must be an array of {field, direction}") }
        if entries.isEmpty { self = .default; return }
        keys = try entries.map { (entry) throws(WireError) -> (field: Field, ascending: Bool) in
            guard let name = entry["field"]?.stringValue else { throw .invalid("each sort entry needs a string field") }
            guard let field = Field(rawValue: name) else {
                throw .invalid("sort field \(name) is not supported (supported: \(Field.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            let direction = entry["direction"]?.intValue ?? -1
            guard direction == 1 || direction == -1 else { throw .invalid("sort direction must be 1 or -1") }
            return (field, direction == 1)
        }
    }

    package static func == (lhs: ChannelOrder, rhs: ChannelOrder) -> Bool {
        lhs.keys.count == rhs.keys.count && zip(lhs.keys, rhs.keys).allSatisfy { $0.field == $1.field && $0.ascending == $1.ascending }
    }

    /// Whether `a` comes before `b`.
    package func precedes(_ a: ChannelListing, _ b: ChannelListing) -> Bool {
        for key in keys {
            let order = Self.compare(a, b, by: key.field)
            if order != 0 { return key.ascending ? order < 0 : order > 0 }
        }
        return a.cid < b.cid
    }

    private static func compare(_ a: ChannelListing, _ b: ChannelListing, by field: Field) -> Int {
        func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : x > y ? 1 : 0 }
        switch field {
        case .lastUpdated: return sign(a.lastMessageAt ?? a.createdAt, b.lastMessageAt ?? b.createdAt)
        case .lastMessageAt: return sign(a.lastMessageAt?.rawValue ?? .min, b.lastMessageAt?.rawValue ?? .min)
        case .createdAt, .updatedAt: return sign(a.createdAt, b.createdAt)
        case .memberCount: return sign(a.memberCount, b.memberCount)
        case .cid: return sign(a.cid, b.cid)
        }
    }
}
