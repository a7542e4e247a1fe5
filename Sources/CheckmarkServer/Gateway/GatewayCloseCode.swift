import CheckmarkCore
import CheckmarkWebSocket
import CheckmarkWire

/// The close codes the gateway ends a connection with, beyond RFC 6455's own (documented in
/// docs/protocol.md). Each close is preceded by an `error` event saying why, except 1001.
package enum GatewayCloseCode {
    /// The server is shutting down, or the connection was idle too long. Reconnect.
    package static let goingAway = WebSocketCloseCode.goingAway
    /// Missing or wrong api_key, missing or invalid token, or a token for another user.
    package static let authenticationFailed = WebSocketCloseCode(rawValue: 4001)
    /// The token's `exp` has passed: get a new token, then reconnect.
    package static let tokenExpired = WebSocketCloseCode(rawValue: 4002)
    /// The user, or the server, has as many connections as its limit allows.
    package static let tooManyConnections = WebSocketCloseCode(rawValue: 4003)
    /// The user does not exist and the connection carried no `user_details` to create it.
    package static let unknownUser = WebSocketCloseCode(rawValue: 4004)
    /// The connection kept sending commands faster than its rate limit.
    package static let rateLimited = WebSocketCloseCode(rawValue: 4008)
    /// The client did not read its events fast enough; its outbound buffer passed the limit.
    /// Reconnect and catch up (state is in the channel responses).
    package static let slowConsumer = WebSocketCloseCode(rawValue: 4009)
    /// A message whose JSON passed a ``CheckmarkCore/JSONLimits`` limit (nesting, keys, string length).
    package static let jsonTooLarge = WebSocketCloseCode.messageTooBig
    /// Storage failed; the server is stopping.
    package static let unavailable = WebSocketCloseCode(rawValue: 1011)
}

extension WebSocketCloseCode {
    /// The close code for a gateway refusal: the one mapping from why to the code on the wire.
    package init(_ refusal: GatewayRefusal) {
        switch refusal {
        case .authentication(let reason):
            switch reason {
            case .tokenExpired: self = GatewayCloseCode.tokenExpired
            case .apiKey, .tokenMissing, .tokenInvalid, .userMismatch, .malformedRequest: self = GatewayCloseCode.authenticationFailed
            }
        case .tooManyConnections: self = GatewayCloseCode.tooManyConnections
        case .unknownUser: self = GatewayCloseCode.unknownUser
        case .profileRefused: self = .policyViolation
        case .unavailable: self = GatewayCloseCode.unavailable
        case .rateLimited: self = GatewayCloseCode.rateLimited
        case .jsonTooLarge: self = GatewayCloseCode.jsonTooLarge
        case .slowConsumer: self = GatewayCloseCode.slowConsumer
        case .shuttingDown: self = GatewayCloseCode.goingAway
        }
    }
}
