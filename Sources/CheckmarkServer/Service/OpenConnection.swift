import CheckmarkCore

/// What the service keeps of a connection from its `connect` to its `disconnect`, in the slot of its
/// ``ConnectionHandle`` (an array indexed by handle: no table keyed by connection id).
struct OpenConnection {
    /// Where the connection's events go; nil for a connection whose events are sent elsewhere, and for
    /// a slot with no connection.
    var sink: (any EventSink)?
    /// Where this node stood in the journal when the connection opened: a resume leaves out the
    /// user's own notifications after it, which the connection received live.
    var openedAt: ConnectionOpening
    /// The identity of the sink's event loop, so that the fan-out groups recipients by loop without
    /// asking each sink (nil without a sink).
    var loop: ObjectIdentifier?
    /// The serial of the handle whose connection this is (0: none).
    var serial: UInt32
    /// The window size of the shared compressed frames the sink takes (0: plain frames), as the sink
    /// said when it opened: it does not change while the connection is open.
    var windowBits: UInt8

    init(sink: (any EventSink)?, openedAt: ConnectionOpening, serial: UInt32) {
        self.sink = sink
        self.openedAt = openedAt
        self.loop = sink.map { ObjectIdentifier($0.eventLoop) }
        self.serial = serial
        self.windowBits = sink?.sharedCompressionWindowBits.map { UInt8(clamping: $0) } ?? 0
    }

    static var empty: OpenConnection { OpenConnection(sink: nil, openedAt: .unknown, serial: 0) }

    /// The index of `handle`'s entry in `table`, if that connection is still open there (the entry
    /// is read in place, not copied).
    static func index(of handle: ConnectionHandle, in table: [OpenConnection]) -> Int? {
        handle.index < table.count && table[handle.index].serial == handle.serial ? handle.index : nil
    }

    /// The entry of `handle` in `table`, if that connection is still open there.
    static func find(_ handle: ConnectionHandle, in table: [OpenConnection]) -> OpenConnection? {
        index(of: handle, in: table).map { table[$0] }
    }
}
