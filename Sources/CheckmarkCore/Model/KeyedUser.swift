/// A user in a ``UserTable``: equal to and hashed like any other holding the same id, whatever its
/// other fields, so that the table finds a user by id alone.
public struct KeyedUser: Sendable, Hashable {
    public let user: User
    /// The slot of the user's oldest open connection in the engine's ``ConnectionTable`` (the head of
    /// their list), or ``ConnectionTable/none``: kept here, not in a table of its own keyed by user.
    var firstConnection = ConnectionTable.none

    init(_ user: User) { self.user = user }

    /// A stand-in holding only `id`, to find the stored user with it.
    init(probing id: String) { user = User(id: id) }

    public static func == (lhs: KeyedUser, rhs: KeyedUser) -> Bool { lhs.user.id == rhs.user.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(user.id) }
}
