/// The open connections of one user, in the order they opened: a walk along the list their slots in
/// the ``ConnectionTable`` make. Holds the table's slots, not a copy of the handles.
public struct UserConnections: Sequence, Sendable {
    private let slots: [ConnectionTable.Slot]
    private let first: UInt32

    init(slots: [ConnectionTable.Slot], first: UInt32) {
        self.slots = slots
        self.first = first
    }

    public var isEmpty: Bool { first == ConnectionTable.none }

    /// Walks the list: linear in the user's connections (at most `max_connections_per_user`, 64 by
    /// default), as opening one (to its end) and closing one (to it) are.
    public var count: Int { reduce(0) { count, _ in count + 1 } as Int }

    public func makeIterator() -> Iterator { Iterator(slots: slots, upcoming: first) }

    public struct Iterator: IteratorProtocol {
        let slots: [ConnectionTable.Slot]
        var upcoming: UInt32

        public mutating func next() -> ConnectionHandle? {
            guard upcoming != ConnectionTable.none else { return nil }
            let handle = ConnectionHandle(slot: upcoming, serial: slots[Int(upcoming)].serial)
            upcoming = slots[Int(upcoming)].nextOfUser
            return handle
        }
    }
}
