import CheckmarkAuth
import CheckmarkCore

/// The one place where errors become what goes on the wire: a stable string code (WebSocket replies),
/// an HTTP status and Stream's numeric error code (REST bodies `{code, message, StatusCode}`).
package struct WireError: Error, Sendable, Hashable {
    /// Stable machine-readable code, e.g. `not_a_member`.
    package var code: String
    package var message: String
    package var httpStatus: Int
    /// Stream's numeric error code, for clients that switch on it.
    package var streamCode: Int

    package init(code: String, message: String, httpStatus: Int, streamCode: Int) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.streamCode = streamCode
    }

    package init(_ error: ReceiptsError) {
        switch error {
        case .unknownUser, .unknownChannel, .unknownChannelType, .unknownMessage, .unknownConnection, .unknownReaction:
            self.init(code: error.code, message: error.description, httpStatus: 404, streamCode: 16)
        case .notAMember, .notAllowed:
            self.init(code: error.code, message: error.description, httpStatus: 403, streamCode: 17)
        case .duplicate:
            self.init(code: error.code, message: error.description, httpStatus: 409, streamCode: 4)
        case .tooManyWatchedChannels, .tooManyConnections:
            self.init(code: error.code, message: error.description, httpStatus: 429, streamCode: 9)
        case .messageTooOld, .invalidArgument:
            self.init(code: error.code, message: error.description, httpStatus: 400, streamCode: 4)
        case .archivedText, .channelsNotLoaded:
            self.init(code: error.code, message: error.description, httpStatus: 503, streamCode: -1)
        }
    }

    package init(_ error: ServiceError) {
        switch error {
        case .rejected(let receipts): self.init(receipts)
        case .storage(let storage):
            self.init(code: "storage_unavailable", message: storage.description, httpStatus: 503, streamCode: -1)
        case .shuttingDown:
            self.init(code: "shutting_down", message: error.description, httpStatus: 503, streamCode: -1)
        }
    }

    package init(_ error: JWTError) {
        switch error {
        case .expired:
            self.init(code: "token_expired", message: error.description, httpStatus: 401, streamCode: 40)
        case .malformed, .unsupportedAlgorithm, .badSignature, .notYetValid:
            self.init(code: "authentication_failed", message: error.description, httpStatus: 401, streamCode: 5)
        }
    }

    /// A refusal of the HTTP listener itself, before any route: 400 (not HTTP, bad framing), 408
    /// (not received in time), 503 (too many pending connections).
    package static func listenerRefusal(status: Int, message: String) -> WireError {
        switch status {
        case 408: WireError(code: "request_timeout", message: message, httpStatus: 408, streamCode: -1)
        case 503: WireError(code: "unavailable", message: message, httpStatus: 503, streamCode: -1)
        default: WireError(code: "invalid_argument", message: message, httpStatus: status, streamCode: 4)
        }
    }

    /// Any error the service's futures fail with.
    package init(any error: any Error) {
        if let wire = error as? WireError { self = wire }
        else if let service = error as? ServiceError { self.init(service) }
        else if let receipts = error as? ReceiptsError { self.init(receipts) }
        else if let jwt = error as? JWTError { self.init(jwt) }
        else { self.init(code: "internal_error", message: "internal error", httpStatus: 500, streamCode: -1) }
    }

    package static func invalid(_ message: String) -> WireError {
        WireError(code: "invalid_argument", message: message, httpStatus: 400, streamCode: 4)
    }

    package static func unauthenticated(_ message: String) -> WireError {
        WireError(code: "authentication_failed", message: message, httpStatus: 401, streamCode: 5)
    }

    package static func forbidden(_ message: String) -> WireError {
        WireError(code: "not_allowed", message: message, httpStatus: 403, streamCode: 17)
    }

    package static func rateLimited(_ message: String) -> WireError {
        WireError(code: "rate_limited", message: message, httpStatus: 429, streamCode: 9)
    }

    package static func tooManyConnections(_ message: String) -> WireError {
        WireError(code: "too_many_connections", message: message, httpStatus: 429, streamCode: 9)
    }

    package static func notFound(_ message: String) -> WireError {
        WireError(code: "not_found", message: message, httpStatus: 404, streamCode: 16)
    }

    /// 413: a request body over the configured limit (Stream's code 22, "payload too big").
    package static func payloadTooLarge(limit: Int) -> WireError {
        WireError(code: "payload_too_large", message: "the request body is larger than \(limit) bytes", httpStatus: 413, streamCode: 22)
    }

    /// 501: a route of Stream's API that Checkmark does not serve; the message names the feature.
    package static func notServed(_ feature: String, route: String) -> WireError {
        WireError(code: "not_served", message: "Checkmark does not serve \(feature) (\(route)); README.md lists what it serves",
                  httpStatus: 501, streamCode: -1)
    }

    /// 405: the path exists but not with this method.
    package static func methodNotAllowed(_ method: String, path: String, allowed: [String]) -> WireError {
        WireError(code: "method_not_allowed", message: "\(method) is not allowed on \(path); use \(allowed.joined(separator: " or "))",
                  httpStatus: 405, streamCode: 4)
    }

    /// The REST body of the error: its JSON object with the request's `duration`.
    package func body(duration: String) -> [UInt8] {
        var w = JSONWriter()
        write(into: &w, duration: duration)
        return w.bytes
    }

    /// The JSON error object: `{"code":N,"message":..,"StatusCode":N,"duration":..,"error_code":..}`.
    package func write(into writer: inout JSONWriter, duration: String = "0.00ms") {
        writer.beginObject()
        writer.field("code", streamCode)
        writer.field("message", message)
        writer.field("StatusCode", httpStatus)
        writer.field("duration", duration)
        writer.field("error_code", code)
        writer.endObject()
    }
}
