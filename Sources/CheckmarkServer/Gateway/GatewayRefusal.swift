import CheckmarkCore
import CheckmarkWire

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
    /// `error`: an unknown user (4004), a user with as many connections as allowed (4003), a profile the
    /// client sent that is refused (1008), or the server unable to take it (1011).
    init(connectFailure error: any Error) {
        switch error as? ReceiptsError ?? (error as? ServiceError)?.rejectedError {
        case .unknownUser?: self = .unknownUser
        case .tooManyConnections?: self = .tooManyConnections
        default: self = WireError(any: error).httpStatus == 400 ? .profileRefused : .unavailable
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
