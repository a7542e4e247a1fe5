import CheckmarkAuth

/// Why a request or connection was refused for its credentials: the bounded label set of
/// `checkmark_auth_failures_total{reason}`.
package enum AuthFailureReason: String, Sendable, CaseIterable {
    /// No `api_key`, or not this deployment's.
    case apiKey = "api_key"
    /// No token where one is required.
    case tokenMissing = "token_missing"
    /// A token that is malformed, badly signed, of an unsupported algorithm or kind, or not yet valid.
    case tokenInvalid = "token_invalid"
    /// A token whose `exp` has passed.
    case tokenExpired = "token_expired"
    /// A valid token for another user than the one the connection names.
    case userMismatch = "user_mismatch"
    /// The connection's `json` parameter is missing or unusable (no `user_id`, bad `resume`).
    case malformedRequest = "malformed_request"

    /// The reason for a token ``JWTError``.
    init(_ error: JWTError) {
        switch error {
        case .expired: self = .tokenExpired
        case .malformed, .unsupportedAlgorithm, .badSignature, .notYetValid: self = .tokenInvalid
        }
    }
}
