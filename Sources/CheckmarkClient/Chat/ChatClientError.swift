import CheckmarkWebSocket

/// Why a chat connection or one of its requests failed.
public enum ChatClientError: Error, Sendable, CustomStringConvertible {
    /// The server refused the connection: its error event's code and message, and the close code.
    case refused(code: String, message: String, closeCode: WebSocketCloseCode?)
    /// The server answered a request with an error (`code` is the stable error code).
    case requestFailed(code: String, message: String, httpStatus: Int)
    /// The connection closed before the answer came.
    case closed(WebSocketCloseCode?)
    /// The server sent something this client does not understand.
    case unexpected(String)

    public var description: String {
        switch self {
        case .refused(let code, let message, let close): "connection refused (\(code), close \(close.map(String.init(describing:)) ?? "none")): \(message)"
        case .requestFailed(let code, let message, let status): "request failed (\(code), \(status)): \(message)"
        case .closed(let code): "connection closed (\(code.map(String.init(describing:)) ?? "no close code"))"
        case .unexpected(let what): "unexpected server message: \(what)"
        }
    }

    /// The stable error code of a refusal or failed request.
    public var code: String? {
        switch self {
        case .refused(let code, _, _), .requestFailed(let code, _, _): code
        default: nil
        }
    }
}
