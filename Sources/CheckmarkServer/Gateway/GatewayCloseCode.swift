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

/// Why the gateway ends a connection. Every close the gateway (and the trace stream) chooses is one
/// of these, and ``WebSocketCloseCode/init(_:)`` is the one place that turns it into a close code.
package enum GatewayRefusal: Sendable, Hashable {
    /// The `/connect` request's credentials or parameters were refused.
    case authentication(AuthFailureReason)
    /// The user, or the server, has as many connections as its limit allows.
    case tooManyConnections
    /// The user does not exist and the connection carried no `user_details` to create it.
    case unknownUser
    /// The profile the client sent with the connection was refused (e.g. over `max_user_profile`).
    case profileRefused
    /// The server could not register the connection, or its storage failed.
    case unavailable
    /// The connection kept sending commands faster than its rate limit.
    case rateLimited
    /// A message whose JSON passed a ``CheckmarkCore/JSONLimits`` limit.
    case jsonTooLarge
    /// The client did not read what it was sent.
    case slowConsumer
    /// The server is shutting down.
    case shuttingDown

    /// The refusal of a connection whose setup (user update or creation, registration) failed with
    /// `error`: an unknown user (4004), a profile the client sent that is refused (1008), or the server
    /// unable to take it (1011).
    init(connectFailure error: any Error) {
        if let receipts = error as? ReceiptsError ?? (error as? ServiceError)?.rejectedError, case .unknownUser = receipts {
            self = .unknownUser
        } else {
            self = WireError(any: error).httpStatus == 400 ? .profileRefused : .unavailable
        }
    }
}

extension ServiceError {
    /// The engine's refusal this error carries, if it is one.
    fileprivate var rejectedError: ReceiptsError? {
        switch self {
        case .rejected(let error): error
        case .storage, .shuttingDown: nil
        }
    }
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
