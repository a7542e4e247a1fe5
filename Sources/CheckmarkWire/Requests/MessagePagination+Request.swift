import CheckmarkCore

/// Stream's `MessagePaginationParams` from a request: the `messages` object of a channel query, or
/// the query string of `GET /messages/{parent_id}/replies`.
extension MessagePagination {
    /// Every cursor field, in the order they are looked for.
    package static let cursorFields = [
        "id_lt", "id_lte", "id_gt", "id_gte", "id_around", "created_at_before", "created_at_before_or_equal",
        "created_at_after", "created_at_after_or_equal", "created_at_around",
    ]

    /// Parses `limit` and at most one cursor from a JSON object. `prefix` names the object in errors
    /// (`messages.`). 400 for a wrong type, a limit past `maxLimit`, or two cursors at once.
    package static func parse(_ object: JSONValue?, prefix: String, defaultLimit: Int, maxLimit: Int) throws(WireError) -> MessagePagination {
        guard let object, object != .null else { return MessagePagination(limit: defaultLimit) }
        guard case .object = object else { throw .invalid("\(prefix.dropLast()) must be an object of paging parameters") }
        let limit = try RequestFields.limit(object["limit"], field: prefix + "limit", default: defaultLimit, max: maxLimit)
        let given = cursorFields.compactMap { field -> (String, JSONValue)? in
            guard let value = object[field], value != .null else { return nil }
            return (field, value)
        }
        guard let (field, value) = try single(given.map(\.0), prefix: prefix).map({ name in given.first { $0.0 == name }! }) else {
            return MessagePagination(limit: limit)
        }
        guard let text = value.stringValue else { throw .invalid("\(prefix)\(field) must be a string") }
        return MessagePagination(limit: limit, cursor: try cursor(field, text, prefix: prefix))
    }

    /// Parses `limit` and at most one cursor from query parameters (all strings).
    package static func parse(query: [String: String], defaultLimit: Int, maxLimit: Int) throws(WireError) -> MessagePagination {
        var limit = defaultLimit
        if let text = query["limit"] {
            guard let number = Int(text), number >= 0 else { throw .invalid("limit must be a non-negative integer") }
            guard number <= maxLimit else { throw .invalid("limit must be at most \(maxLimit)") }
            limit = number
        }
        let given = cursorFields.filter { query[$0] != nil }
        guard let field = try single(given, prefix: "") else { return MessagePagination(limit: limit) }
        return MessagePagination(limit: limit, cursor: try cursor(field, query[field]!, prefix: ""))
    }

    /// The one cursor given, if any; 400 naming them when there are several.
    private static func single(_ fields: [String], prefix: String) throws(WireError) -> String? {
        guard fields.count <= 1 else {
            throw .invalid("use one paging cursor at a time; got \(fields.map { prefix + $0 }.joined(separator: " and "))")
        }
        return fields.first
    }

    private static func cursor(_ field: String, _ text: String, prefix: String) throws(WireError) -> Cursor {
        func time() throws(WireError) -> Timestamp {
            guard let time = Timestamp(rfc3339: text) else { throw .invalid("\(prefix)\(field) must be an RFC 3339 time") }
            return time
        }
        guard !text.isEmpty else { throw .invalid("\(prefix)\(field) must not be empty") }
        switch field {
        case "id_lt": return .idLT(text)
        case "id_lte": return .idLTE(text)
        case "id_gt": return .idGT(text)
        case "id_gte": return .idGTE(text)
        case "id_around": return .idAround(text)
        case "created_at_before": return .createdAtBefore(try time())
        case "created_at_before_or_equal": return .createdAtBeforeOrEqual(try time())
        case "created_at_after": return .createdAtAfter(try time())
        case "created_at_after_or_equal": return .createdAtAfterOrEqual(try time())
        default: return .createdAtAround(try time())
        }
    }
}
