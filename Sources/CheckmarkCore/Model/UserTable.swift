/// Every user the engine knows, found by id. Each user is held once with its id inside it: a
/// dictionary keyed by id would hold every id twice (16 bytes more per user, more than that once the
/// table's spare capacity is counted). Equal when both hold the same users, field for field.
public struct UserTable: Sendable, Equatable, Sequence {
    private var stored = Set<KeyedUser>()

    public init() {}

    /// The user with `id`, or nil. Setting a user stores it under `id` (which must be the user's own
    /// id); setting nil removes the user.
    public subscript(id: String) -> User? {
        get {
            guard let index = stored.firstIndex(of: KeyedUser(probing: id)) else { return nil }
            return stored[index].user
        }
        set {
            guard let newValue else {
                stored.remove(KeyedUser(probing: id))
                return
            }
            precondition(newValue.id == id, "user \(newValue.id) stored under id \(id)")
            var keyed = KeyedUser(newValue)
            if let index = stored.firstIndex(of: keyed) { keyed.firstConnection = stored[index].firstConnection }
            stored.update(with: keyed)
        }
    }

    /// The slot of the user's oldest open connection, or ``ConnectionTable/none`` (also for an unknown user).
    func firstConnection(of id: String) -> UInt32 {
        guard let index = stored.firstIndex(of: KeyedUser(probing: id)) else { return ConnectionTable.none }
        return stored[index].firstConnection
    }

    /// Sets the slot of the user's oldest open connection; the user must exist.
    mutating func setFirstConnection(of id: String, to slot: UInt32) {
        guard let index = stored.firstIndex(of: KeyedUser(probing: id)) else {
            preconditionFailure("user \(id) does not exist")
        }
        var keyed = stored[index]
        keyed.firstConnection = slot
        stored.update(with: keyed)
    }

    public var count: Int { stored.count }
    public var isEmpty: Bool { stored.isEmpty }
    /// The users, in no particular order.
    public var values: [User] { stored.map(\.user) }

    public func makeIterator() -> LazyMapSequence<Set<KeyedUser>, User>.Iterator {
        stored.lazy.map(\.user).makeIterator()
    }

    public static func == (lhs: UserTable, rhs: UserTable) -> Bool {
        lhs.count == rhs.count && lhs.stored.allSatisfy { rhs[$0.user.id] == $0.user }
    }
}
