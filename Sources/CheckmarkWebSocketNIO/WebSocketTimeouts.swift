import NIOCore

/// Timers around a WebSocket connection; the codec itself has no clock.
public struct WebSocketTimeouts: Sendable, Hashable {
    /// How long to wait for the peer's close frame (or, after the handshake, for the peer to drop
    /// the TCP connection) before dropping it ourselves.
    public var closeTimeout: TimeAmount
    /// A connection silent for this long is pinged (busy connections are not); nil disables pings.
    public var keepaliveInterval: TimeAmount? {
        get { Self.amount(keepaliveNanoseconds) }
        set { keepaliveNanoseconds = Self.nanoseconds(newValue) }
    }
    /// A connection that sends nothing for this long is closed with 1001; nil disables it.
    public var idleTimeout: TimeAmount? {
        get { Self.amount(idleNanoseconds) }
        set { idleNanoseconds = Self.nanoseconds(newValue) }
    }

    // Every connection's handler keeps its timeouts: stored as nanoseconds with `none` for nil, they
    // take 24 bytes instead of 33 (an optional `TimeAmount` is 9 bytes, padded to 16).
    private var keepaliveNanoseconds: Int64
    private var idleNanoseconds: Int64
    private static let none = Int64.min

    public init(closeTimeout: TimeAmount = .seconds(5), keepaliveInterval: TimeAmount? = .seconds(30), idleTimeout: TimeAmount? = .seconds(120)) {
        self.closeTimeout = closeTimeout
        self.keepaliveNanoseconds = Self.nanoseconds(keepaliveInterval)
        self.idleNanoseconds = Self.nanoseconds(idleTimeout)
    }

    private static func amount(_ nanoseconds: Int64) -> TimeAmount? {
        nanoseconds == none ? nil : .nanoseconds(nanoseconds)
    }

    /// `TimeAmount.nanoseconds(.min)`, the one amount that cannot be kept, is kept as the nearest.
    private static func nanoseconds(_ amount: TimeAmount?) -> Int64 {
        guard let amount else { return none }
        return amount.nanoseconds == none ? none + 1 : amount.nanoseconds
    }
}
