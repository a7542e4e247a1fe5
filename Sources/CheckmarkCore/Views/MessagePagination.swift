/// Which page of a message list a query asks for: Stream's `MessagePaginationParams`, one cursor at
/// most. Pages are always returned oldest first, as Stream returns them.
public struct MessagePagination: Sendable, Hashable {
    /// Where the page stands relative to a message or a time.
    public enum Cursor: Sendable, Hashable {
        /// The newest `limit` messages before the message (`id_lt`), or up to and including it (`id_lte`).
        case idLT(String), idLTE(String)
        /// The oldest `limit` messages after the message (`id_gt`), or from it on (`id_gte`).
        case idGT(String), idGTE(String)
        /// `limit` messages with the message in their middle (`id_around`).
        case idAround(String)
        /// Likewise by creation time (`created_at_before`, `..._or_equal`, `created_at_after`, ...).
        case createdAtBefore(Timestamp), createdAtBeforeOrEqual(Timestamp)
        case createdAtAfter(Timestamp), createdAtAfterOrEqual(Timestamp)
        case createdAtAround(Timestamp)

        /// The request field that names this cursor.
        public var field: String {
            switch self {
            case .idLT: "id_lt"
            case .idLTE: "id_lte"
            case .idGT: "id_gt"
            case .idGTE: "id_gte"
            case .idAround: "id_around"
            case .createdAtBefore: "created_at_before"
            case .createdAtBeforeOrEqual: "created_at_before_or_equal"
            case .createdAtAfter: "created_at_after"
            case .createdAtAfterOrEqual: "created_at_after_or_equal"
            case .createdAtAround: "created_at_around"
            }
        }
    }

    public var limit: Int
    public var cursor: Cursor?

    public init(limit: Int, cursor: Cursor? = nil) {
        self.limit = limit
        self.cursor = cursor
    }

    /// The page of `positions` (ascending positions in `messages`, whose times increase with their
    /// position) this pagination selects, oldest first. An id cursor must name a message of the list:
    /// otherwise `invalid_argument` naming the field (`messages.id_lt: ...` with `prefix` "messages.").
    public func page(of positions: [Int], in messages: MessageLog, prefix: String = "") throws(ReceiptsError) -> ArraySlice<Int> {
        let count = positions.count
        guard let cursor else { return positions.suffix(limit) }
        func place(of id: String) throws(ReceiptsError) -> Int {
            guard let position = messages.position(of: id) else {
                throw .invalidArgument("\(prefix)\(cursor.field): message \(id) does not exist")
            }
            let k = lowerBound(positions) { $0 < position }
            guard k < count, positions[k] == position else {
                throw .invalidArgument("\(prefix)\(cursor.field): message \(id) is not in this message list")
            }
            return k
        }
        func before(_ time: Timestamp) -> Int { lowerBound(positions) { messages.createdAt(at: $0) < time } }
        func atOrBefore(_ time: Timestamp) -> Int { lowerBound(positions) { messages.createdAt(at: $0) <= time } }
        switch cursor {
        case .idLT(let id): return older(than: try place(of: id), in: positions)
        case .idLTE(let id): return older(than: try place(of: id) + 1, in: positions)
        case .idGT(let id): return newer(from: try place(of: id) + 1, in: positions)
        case .idGTE(let id): return newer(from: try place(of: id), in: positions)
        case .idAround(let id): return around(try place(of: id), in: positions)
        case .createdAtBefore(let time): return older(than: before(time), in: positions)
        case .createdAtBeforeOrEqual(let time): return older(than: atOrBefore(time), in: positions)
        case .createdAtAfter(let time): return newer(from: atOrBefore(time), in: positions)
        case .createdAtAfterOrEqual(let time): return newer(from: before(time), in: positions)
        case .createdAtAround(let time): return around(min(before(time), max(count - 1, 0)), in: positions)
        }
    }

    /// The newest `limit` of `positions[..<end]`.
    private func older(than end: Int, in positions: [Int]) -> ArraySlice<Int> {
        positions[max(0, end - limit)..<end]
    }

    /// The oldest `limit` of `positions[start...]`.
    private func newer(from start: Int, in positions: [Int]) -> ArraySlice<Int> {
        positions[start..<min(positions.count, start + limit)]
    }

    /// `limit` positions with `center` in their middle (fewer on one side at an end, more on the other).
    private func around(_ center: Int, in positions: [Int]) -> ArraySlice<Int> {
        guard limit > 0, !positions.isEmpty else { return [] }
        // The message at index limit / 2 of the page, as Stream's SDKs expect of an `id_around` page.
        let end = min(positions.count, max(center - limit / 2, 0) + limit)
        return positions[max(0, end - limit)..<end]
    }

    /// The first index of `positions` for which `isBefore` is false (`isBefore` holds for a prefix).
    private func lowerBound(_ positions: [Int], _ isBefore: (Int) -> Bool) -> Int {
        var low = 0
        var high = positions.count
        while low < high {
            let mid = (low + high) / 2
            if isBefore(positions[mid]) { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
