/// An open gateway connection in the gateway's set of them, equal only to itself: the set keeps one
/// reference per connection (a dictionary from its identity to it kept the identity a second time).
struct OpenGatewayConnection: Hashable, @unchecked Sendable {
    /// Used only on its own event loop; the set is only added to, removed from and listed under the
    /// gateway's lock.
    let connection: GatewayConnection

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.connection === rhs.connection }

    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(connection)) }
}
