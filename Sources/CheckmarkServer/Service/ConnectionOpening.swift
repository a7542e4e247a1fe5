import CheckmarkStorage

/// Where a node stood in the journal when a connection opened: a resume leaves out the user's own
/// notifications the node applied after it, which reached the connection live. Kept per
/// connection, so small where it can be.
package enum ConnectionOpening: Sendable, Hashable {
    /// One node, which numbers every event after the one before: the last event's sequence.
    case afterEvent(Int64)
    /// A cluster node, whose nodes number apart (``JournalNumbering``): each stream's last number
    /// it had applied (shared with the connections opened before its next entry).
    case afterStreams([Int64])
    /// Not known (a connection not open here): no event counts as received live.
    case unknown

    /// Whether the node applied `event`'s entry after the connection opened; false when that cannot
    /// be told (the event is then replayed rather than lost).
    func sawLive(_ event: JournalEvent) -> Bool {
        switch self {
        case .afterEvent(let seq): event.seq > seq
        case .afterStreams(let applied): event.entry?.isApplied(after: applied) == true
        case .unknown: false
        }
    }
}
