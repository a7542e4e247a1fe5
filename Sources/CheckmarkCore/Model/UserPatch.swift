/// A partial update of a user: only the fields given change (`PATCH /users`).
public struct UserPatch: Sendable, Hashable {
    public var id: String
    public var set: [(String, JSONValue)]
    public var unset: [String]

    public init(id: String, set: [(String, JSONValue)] = [], unset: [String] = []) {
        self.id = id
        self.set = set
        self.unset = unset
    }

    public static func == (lhs: UserPatch, rhs: UserPatch) -> Bool {
        lhs.id == rhs.id && JSONValue.object(lhs.set) == JSONValue.object(rhs.set) && lhs.unset == rhs.unset
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
