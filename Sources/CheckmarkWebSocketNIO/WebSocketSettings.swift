import CheckmarkWebSocket

/// Codec limits and timers applied to every WebSocket connection of a listener.
public struct WebSocketSettings: Sendable, Hashable {
    public var limits: WebSocketLimits
    public var timeouts: WebSocketTimeouts

    public init(limits: WebSocketLimits = .default, timeouts: WebSocketTimeouts = .init()) {
        self.limits = limits
        self.timeouts = timeouts
    }
}
