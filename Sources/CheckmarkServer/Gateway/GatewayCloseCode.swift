import CheckmarkWebSocket
import CheckmarkWire

/// The close codes the gateway ends a connection with, beyond RFC 6455's own (documented in
/// docs/protocol.md). Each close is preceded by an `error` event saying why, except 1001.
public enum GatewayCloseCode {
    /// The server is shutting down, or the connection was idle too long. Reconnect.
    public static let goingAway = WebSocketCloseCode.goingAway
    /// Missing or wrong api_key, missing or invalid token, or a token for another user.
    public static let authenticationFailed = WebSocketCloseCode(rawValue: 4001)
    /// The token's `exp` has passed: get a new token, then reconnect.
    public static let tokenExpired = WebSocketCloseCode(rawValue: 4002)
    /// The user, or the server, has as many connections as its limit allows.
    public static let tooManyConnections = WebSocketCloseCode(rawValue: 4003)
    /// The user does not exist and the connection carried no `user_details` to create it.
    public static let unknownUser = WebSocketCloseCode(rawValue: 4004)
    /// The connection kept sending commands faster than its rate limit.
    public static let rateLimited = WebSocketCloseCode(rawValue: 4008)
    /// The client did not read its events fast enough; its outbound buffer passed the limit.
    /// Reconnect and catch up (state is in the channel responses).
    public static let slowConsumer = WebSocketCloseCode(rawValue: 4009)
    /// A message whose JSON passed a ``CheckmarkCore/JSONLimits`` limit (nesting, keys, string length).
    public static let jsonTooLarge = WebSocketCloseCode.messageTooBig
    /// Storage failed; the server is stopping.
    public static let unavailable = WebSocketCloseCode(rawValue: 1011)

    /// The close code for a connection refused while it was being set up: an unknown user (4004), a
    /// profile the client sent that is refused (1008, e.g. over `max_user_profile`), or the server
    /// unable to take it (1011).
    static func refusingConnect(_ error: WireError) -> WebSocketCloseCode {
        if error.code == "unknown_user" { return unknownUser }
        return error.httpStatus == 400 ? .policyViolation : unavailable
    }
}
