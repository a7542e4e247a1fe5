/// How long the journal keeps history. State tables are never pruned; only the journal is.
package struct RetentionPolicy: Sendable, Hashable {
    /// Journal entries older than this many seconds are removed; nil keeps them forever.
    package var maxAgeSeconds: Int64?
    /// Per channel, only the newest this many events are kept; nil keeps them all.
    package var maxEventsPerChannel: Int?

    package init(maxAgeSeconds: Int64? = nil, maxEventsPerChannel: Int? = nil) {
        self.maxAgeSeconds = maxAgeSeconds
        self.maxEventsPerChannel = maxEventsPerChannel
    }

    /// Keep everything.
    package static let keepAll = RetentionPolicy()

    /// About how many rows one prune removes at most, so that it holds the writer briefly: a prune
    /// that removed this many is followed by another soon (an old database's first prunes).
    package static let rowsPerPrune = 5_000

    /// After how many newly journaled events a prune is due: as many as a channel keeps, at most
    /// ``rowsPerPrune``. So the journal holds past what it keeps at most about that many events.
    package var eventsBetweenPrunes: Int { max(1, min(Self.rowsPerPrune, maxEventsPerChannel ?? Self.rowsPerPrune)) }
}
