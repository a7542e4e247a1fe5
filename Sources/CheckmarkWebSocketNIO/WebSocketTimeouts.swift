import NIOCore

/// Timers around a WebSocket connection; the codec itself has no clock.
public struct WebSocketTimeouts: Sendable, Hashable {
    /// How long to wait for the peer's close frame (or, after the handshake, for the peer to drop
    /// the TCP connection) before dropping it ourselves.
    public var closeTimeout: TimeAmount
    /// A connection silent for this long is pinged (busy connections are not); nil disables pings.
    public var keepaliveInterval: TimeAmount?
    /// A connection that sends nothing for this long is closed with 1001; nil disables it.
    public var idleTimeout: TimeAmount?

    public init(closeTimeout: TimeAmount = .seconds(5), keepaliveInterval: TimeAmount? = .seconds(30), idleTimeout: TimeAmount? = .seconds(120)) {
        self.closeTimeout = closeTimeout
        self.keepaliveInterval = keepaliveInterval
        self.idleTimeout = idleTimeout
    }
}
