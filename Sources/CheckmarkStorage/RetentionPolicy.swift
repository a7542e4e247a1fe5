/// How long the journal keeps history. State tables are never pruned; only the journal is.
public struct RetentionPolicy: Sendable, Hashable {
    /// Journal entries older than this many seconds are removed; nil keeps them forever.
    public var maxAgeSeconds: Int64?
    /// Per channel, only the newest this many events are kept; nil keeps them all.
    public var maxEventsPerChannel: Int?

    public init(maxAgeSeconds: Int64? = nil, maxEventsPerChannel: Int? = nil) {
        self.maxAgeSeconds = maxAgeSeconds
        self.maxEventsPerChannel = maxEventsPerChannel
    }

    /// Keep everything (the default).
    public static let keepAll = RetentionPolicy()
}
