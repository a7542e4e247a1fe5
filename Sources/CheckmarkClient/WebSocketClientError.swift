/// Why a client connection could not be opened.
public enum WebSocketClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The URL is not `ws://host[:port][/path]`.
    case invalidURL(String)
    /// The server answered the upgrade with something other than a valid 101; `status` is its status
    /// (0 when the response was not HTTP) and `body` what it said.
    case handshakeFailed(status: Int, reason: String, body: String)
    /// The connection closed before the handshake finished.
    case connectionClosed

    public var description: String {
        switch self {
        case .invalidURL(let url): "not a ws:// URL: \(url)"
        case .handshakeFailed(let status, let reason, let body): "handshake failed (\(status)): \(reason) \(body)"
        case .connectionClosed: "connection closed during the handshake"
        }
    }
}
