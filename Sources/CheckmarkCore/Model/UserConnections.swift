/// The open connections of one user, in the order they opened. The oldest is held inline: most
/// users have one connection, and an array of one would be a heap allocation per connected user.
public struct UserConnections: Sendable, Hashable, RandomAccessCollection, ExpressibleByArrayLiteral {
    private var oldest: String?
    private var later: [String] = []

    public init(arrayLiteral connectionIDs: String...) {
        for id in connectionIDs { append(id) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { oldest == nil ? 0 : 1 + later.count }

    public subscript(position: Int) -> String {
        precondition(indices.contains(position), "connection \(position) of \(count)")
        return position == 0 ? oldest! : later[position - 1]
    }

    /// Adds a connection that has just opened.
    mutating func append(_ connectionID: String) {
        if oldest == nil { oldest = connectionID } else { later.append(connectionID) }
    }

    /// Removes a connection that closed; the others keep their order.
    mutating func remove(_ connectionID: String) {
        if oldest == connectionID {
            oldest = later.isEmpty ? nil : later.removeFirst()
        } else {
            later.removeAll { $0 == connectionID }
        }
    }
}
