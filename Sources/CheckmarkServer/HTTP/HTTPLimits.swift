import NIOCore

/// Limits on the HTTP side of the listener.
public struct HTTPLimits: Sendable, Hashable {
    /// Largest request head (request line and headers) in bytes; 431 past it.
    public var maxHeadSize: Int
    /// Largest request body in bytes; 413 past it.
    public var maxBodySize: Int
    /// Time allowed for a complete request head to arrive; 408 and close past it (slowloris guard).
    public var headTimeout: TimeAmount

    /// Each connection's write buffer water marks: above `high` bytes queued the channel reports
    /// itself not writable (and the gateway starts measuring a slow consumer), below `low` writable again.
    public static let writeBufferLowWaterMark = 32 * 1024
    /// Body bytes read and dropped after a 413 before the connection is closed anyway.
    public static let maxLingerBytes = 64 << 20
    public static let writeBufferHighWaterMark = 64 * 1024

    public init(maxHeadSize: Int = 16 * 1024, maxBodySize: Int = 1 << 20, headTimeout: TimeAmount = .seconds(10)) {
        self.maxHeadSize = maxHeadSize
        self.maxBodySize = maxBodySize
        self.headTimeout = headTimeout
    }
}
