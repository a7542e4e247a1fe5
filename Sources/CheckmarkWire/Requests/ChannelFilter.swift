import CheckmarkCore

/// The `filter_conditions` of a channel query, in the subset of Stream's filter language that concerns
/// membership and identity: `cid`, `id`, `type` (a value, `{"$eq": v}` or `{"$in": [..]}`), `members`
/// (`{"$in": [ids]}`: any of them is a member; a single id: that user is a member; `{"$eq": [ids]}`:
/// exactly these members) and `$and` of such filters. Anything else is refused with `invalid_argument`
/// naming it, never silently ignored. Pure.
package struct ChannelFilter: Sendable, Equatable {
    package enum Condition: Sendable, Equatable {
        case cid(Set<String>)
        case id(Set<String>)
        case type(Set<String>)
        case anyMember(Set<String>)
        case exactMembers(Set<String>)
    }

    /// All must hold.
    package var conditions: [Condition]

    package static let supportedFields = ["cid", "id", "type", "members", "$and"]

    package init(conditions: [Condition]) {
        self.conditions = conditions
    }

    package init(parsing json: JSONValue) throws(WireError) {
        guard let fields = json.objectValue else { throw .invalid("filter_conditions must be an object") }
        var conditions: [Condition] = []
        for (field, value) in fields {
            switch field {
            case "$and":
                guard let parts = value.arrayValue else { throw .invalid("$and must be an array of filters") }
                for part in parts { conditions += try ChannelFilter(parsing: part).conditions }
            case "cid", "id", "type":
                let values = try Self.values(field, value)
                conditions.append(field == "cid" ? .cid(values) : field == "id" ? .id(values) : .type(values))
            case "members":
                if let id = value.stringValue {
                    conditions.append(.anyMember([id]))
                } else if let ids = value["$in"] {
                    conditions.append(.anyMember(try Self.strings("members.$in", ids)))
                } else if let ids = value["$eq"] {
                    conditions.append(.exactMembers(try Self.strings("members.$eq", ids)))
                } else {
                    throw .invalid("members supports a user id, {\"$in\": [ids]} or {\"$eq\": [ids]}")
                }
            default:
                throw .invalid("filter field \(field) is not supported (supported: \(Self.supportedFields.joined(separator: ", ")))")
            }
        }
        self.conditions = conditions
    }

    private static func values(_ field: String, _ value: JSONValue) throws(WireError) -> Set<String> {
        if let text = value.stringValue { return [text] }
        if let inner = value.objectValue, inner.count == 1 {
            switch inner[0].0 {
            case "$eq":
                guard let text = inner[0].1.stringValue else { throw .invalid("\(field).$eq must be a string") }
                return [text]
            case "$in":
                return try strings("\(field).$in", inner[0].1)
            default:
                break
            }
        }
        throw .invalid("\(field) supports a string, {\"$eq\": string} or {\"$in\": [strings]}")
    }

    private static func strings(_ field: String, _ value: JSONValue) throws(WireError) -> Set<String> {
        guard let array = value.arrayValue else { throw .invalid("\(field) must be an array of strings") }
        var result: Set<String> = []
        for element in array {
            guard let text = element.stringValue else { throw .invalid("\(field) must be an array of strings") }
            result.insert(text)
        }
        return result
    }

    /// Whether the channel passes every condition.
    package func matches(_ channel: ChannelListing) -> Bool {
        conditions.allSatisfy { condition in
            switch condition {
            case .cid(let values): values.contains(channel.cid.description)
            case .id(let values): values.contains(channel.cid.id)
            case .type(let values): values.contains(channel.cid.type)
            case .anyMember(let ids): ids.contains { channel.hasMember($0) }
            case .exactMembers(let ids): ids.count == channel.memberCount && ids.allSatisfy { channel.hasMember($0) }
            }
        }
    }

    /// Channels that can match, narrowed by the cheapest condition (cids named, or members' channels);
    /// nil when every channel must be tested.
    package func candidates(in engine: ReceiptsEngine) -> Set<ChannelCID>? {
        for condition in conditions {
            switch condition {
            case .cid(let values): return Set(values.compactMap(ChannelCID.init))
            case .anyMember(let ids), .exactMembers(let ids):
                return ids.reduce(into: Set<ChannelCID>()) { $0.formUnion(engine.membership[$1] ?? []) }
            default: continue
            }
        }
        return nil
    }
}
