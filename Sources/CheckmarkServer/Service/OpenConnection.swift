import CheckmarkCore

/// What the service keeps of a connection from its `connect` to its `disconnect`, in the slot of its
/// ``ConnectionHandle`` (an array indexed by handle: no table keyed by connection id).
struct OpenConnection {
    /// Where the connection's events go; nil for a connection whose events are sent elsewhere, and for
    /// a slot with no connection.
    var sink: (any EventSink)?
    /// The journal's last event sequence when the connection opened: a resume leaves out the user's
    /// own notifications after it, which the connection received live.
    var openedAfterEventSeq: Int64
    /// The serial of the handle whose connection this is (0: none).
    var serial: UInt32

    static var empty: OpenConnection { OpenConnection(sink: nil, openedAfterEventSeq: 0, serial: 0) }

    /// The entry of `handle` in `table`, if that connection is still open there.
    static func find(_ handle: ConnectionHandle, in table: [OpenConnection]) -> OpenConnection? {
        guard handle.index < table.count, table[handle.index].serial == handle.serial else { return nil }
        return table[handle.index]
    }
}
