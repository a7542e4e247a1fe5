import CheckmarkCore

/// What the service keeps of a connection from its `connect` to its `disconnect`, in one table entry
/// per connection (one table, not one per field: at 10,000 connections each table is 16,384 buckets).
struct OpenConnection {
    /// Where the connection's events go; nil for a connection whose events are sent elsewhere.
    var sink: (any EventSink)?
    /// The journal's last event sequence when the connection opened: a resume leaves out the user's
    /// own notifications after it, which the connection received live.
    var openedAfterEventSeq: Int64
}
