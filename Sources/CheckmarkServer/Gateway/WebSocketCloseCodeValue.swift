import CheckmarkWebSocket

/// A close code chosen by the server for all connections at once (shutdown).
public struct WebSocketCloseCodeValue: Sendable {
    public var code: WebSocketCloseCode
    public init(_ code: WebSocketCloseCode) { self.code = code }
    public static let goingAway = WebSocketCloseCodeValue(.goingAway)
}
