/// An open connection's identity inside the engine, from the `connect` that opened it to its
/// `disconnect`: its slot in the ``ConnectionTable`` (a small integer, reused once the connection
/// closes) and the serial number of the `connect` that took the slot (not reused before 2^32 more
/// connects). A shell that keeps per-connection state in an array indexed by ``index`` checks
/// ``serial`` before using an entry: a handle in an event released after its connection closed then
/// finds nothing, not the connection that took the slot since.
public struct ConnectionHandle: Sendable, Hashable {
    public let slot: UInt32
    public let serial: UInt32

    public init(slot: UInt32, serial: UInt32) {
        self.slot = slot
        self.serial = serial
    }

    /// ``slot`` as an array index.
    public var index: Int { Int(slot) }
}
