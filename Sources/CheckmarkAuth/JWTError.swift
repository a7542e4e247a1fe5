/// Why a token was refused. The shells map each case to a Stream-style error (HTTP 401, or a
/// WebSocket error event and close) in one place.
package enum JWTError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not three base64url parts, or parts that are not JSON objects.
    case malformed
    /// A header `alg` other than HS256.
    case unsupportedAlgorithm(String)
    /// The signature does not match the secret.
    case badSignature
    /// `exp` is in the past.
    case expired
    /// `nbf` (not before) or `iat` (issued at) is in the future, past the allowed clock skew.
    case notYetValid(claim: String)

    package var description: String {
        switch self {
        case .malformed: "token is malformed"
        case .unsupportedAlgorithm(let alg): "token algorithm \(alg) is not supported; use HS256"
        case .badSignature: "token signature is invalid"
        case .expired: "token has expired"
        case .notYetValid(let claim): "token is not valid yet: its \(claim) is in the future"
        }
    }
}
