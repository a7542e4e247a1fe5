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

    /// Keep everything (the default).
    package static let keepAll = RetentionPolicy()
}
