/// The engine's open connections. A connection's id (a string from the wire) is looked up once, when
/// a command names it; from then on the engine, its events' recipients and the shells' fan-out use its
/// ``ConnectionHandle``, whose slot holds the id, the user and the channels it watches. A user's
/// connections are linked through their slots in the order they opened (the first is kept with the
/// user, in the ``UserTable``), so no table keyed by user is needed for them.
public struct ConnectionTable: Sendable {
    struct Slot: Sendable {
        var id: String
        var userID: String
        var watching: Set<ChannelCID> = []
        var serial: UInt32
        /// The slot of the same user's next connection (opened later), or ``ConnectionTable/none``.
        var nextOfUser: UInt32 = ConnectionTable.none
    }

    /// No slot: the end of a user's list.
    static let none = UInt32.max

    /// Open connections' slots, and closed ones' (their id empty) waiting in ``freeSlots`` for reuse.
    private(set) var slots: [Slot] = []
    private var freeSlots: [UInt32] = []
    private var slotOfID: [String: UInt32] = [:]
    private var lastSerial: UInt32 = 0

    public init() {}

    /// Open connections.
    public var count: Int { slotOfID.count }
    public var isEmpty: Bool { slotOfID.isEmpty }

    /// The user of the open connection `id`, or nil.
    public subscript(id: String) -> String? {
        slotOfID[id].map { slots[Int($0)].userID }
    }

    /// The handle of the open connection `id`, or nil.
    public func handle(of id: String) -> ConnectionHandle? {
        slotOfID[id].map { handle(at: $0) }
    }

    /// The id of the open connection `handle`.
    public func id(of handle: ConnectionHandle) -> String {
        checkOpen(handle)
        return slots[handle.index].id
    }

    /// The user of the open connection `handle`.
    public func userID(of handle: ConnectionHandle) -> String {
        checkOpen(handle)
        return slots[handle.index].userID
    }

    /// The channels the connection `id` watches (none for a connection that is not open).
    public func watching(_ id: String) -> Set<ChannelCID> {
        slotOfID[id].map { slots[Int($0)].watching } ?? []
    }

    /// The channels the open connection `handle` watches.
    public func watching(at handle: ConnectionHandle) -> Set<ChannelCID> {
        checkOpen(handle)
        return slots[handle.index].watching
    }

    func handle(at slot: UInt32) -> ConnectionHandle {
        ConnectionHandle(slot: slot, serial: slots[Int(slot)].serial)
    }

    /// Traps unless `handle` is an open connection's: a closed slot's serial is 0, and no handle's is.
    private func checkOpen(_ handle: ConnectionHandle) {
        precondition(handle.index < slots.count && slots[handle.index].serial == handle.serial, "connection handle \(handle) is not open")
    }

    /// Opens `id` (not empty and not open: the engine checks both) for `userID`, in a free slot or a
    /// new one.
    mutating func open(_ id: String, userID: String) -> ConnectionHandle {
        precondition(!id.isEmpty, "a connection id may not be empty")
        precondition(slotOfID[id] == nil, "connection \(id) is already open")
        lastSerial &+= 1
        if lastSerial == 0 { lastSerial = 1 }
        let entry = Slot(id: id, userID: userID, serial: lastSerial)
        let slot: UInt32
        if let free = freeSlots.popLast() {
            slot = free
            slots[Int(slot)] = entry
        } else {
            slot = UInt32(slots.count)
            slots.append(entry)
        }
        slotOfID[id] = slot
        return ConnectionHandle(slot: slot, serial: lastSerial)
    }

    /// Closes the open connection `handle` (already unlinked from its user's list); returns the
    /// channels it watched.
    mutating func close(_ handle: ConnectionHandle) -> Set<ChannelCID> {
        checkOpen(handle)
        let closed = slots[handle.index]
        slotOfID[closed.id] = nil
        slots[handle.index] = Slot(id: "", userID: "", serial: 0)
        freeSlots.append(handle.slot)
        return closed.watching
    }

    mutating func insertWatching(_ cid: ChannelCID, at handle: ConnectionHandle) {
        slots[handle.index].watching.insert(cid)
    }

    mutating func removeWatching(_ cid: ChannelCID, at handle: ConnectionHandle) {
        slots[handle.index].watching.remove(cid)
    }

    func nextOfUser(after slot: UInt32) -> UInt32 {
        slots[Int(slot)].nextOfUser
    }

    mutating func setNextOfUser(after slot: UInt32, to next: UInt32) {
        slots[Int(slot)].nextOfUser = next
    }
}
