import CheckmarkAuth
import CheckmarkCore
import CheckmarkWire

/// Who is calling the REST API, from the `Authorization` JWT: a server token (`{"server": true}`)
/// may act for any user named in the request; a user token acts only as its own user.
enum RESTCaller: Sendable, Equatable {
    case server
    case user(String)

    /// Who calls, from the `api_key` and the token a request carries (`tokenSource` names where the
    /// token goes, for the error). 401 `unauthenticated` for a missing or wrong key or token.
    static func authenticate(apiKey given: String?, token: String?, tokenSource: String, apiKey: String, apiSecret: String,
                             now: Timestamp, clockSkewSeconds: Double = JWT.defaultClockSkewSeconds) throws(WireError) -> RESTCaller {
        switch check(apiKey: given, token: token, tokenSource: tokenSource, apiKey: apiKey, apiSecret: apiSecret, now: now,
                     clockSkewSeconds: clockSkewSeconds) {
        case .success(let caller): return caller
        case .failure(let failure): throw failure.error
        }
    }

    /// A refused credential: the 401 to answer and what `checkmark_auth_failures_total` counts it as.
    struct Failure: Error {
        var error: WireError
        var reason: AuthFailureReason
    }

    /// ``authenticate(apiKey:token:tokenSource:apiKey:apiSecret:now:)`` with the reason of a refusal.
    static func check(apiKey given: String?, token: String?, tokenSource: String, apiKey: String, apiSecret: String,
                      now: Timestamp, clockSkewSeconds: Double = JWT.defaultClockSkewSeconds) -> Result<RESTCaller, Failure> {
        guard let given, !given.isEmpty else { return .failure(Failure(error: .unauthenticated("the api_key query parameter is required"), reason: .apiKey)) }
        guard given == apiKey else { return .failure(Failure(error: .unauthenticated("api_key \(given) is not valid"), reason: .apiKey)) }
        guard let token, !token.isEmpty else { return .failure(Failure(error: .unauthenticated("\(tokenSource) (a JWT) is required"), reason: .tokenMissing)) }
        let claims: JSONValue
        do { claims = try JWT.verify(token, secret: apiSecret, now: now, clockSkewSeconds: clockSkewSeconds) } catch {
            return .failure(Failure(error: WireError(error), reason: AuthFailureReason(error)))
        }
        if claims["server"]?.boolValue == true { return .success(.server) }
        if let user = claims["user_id"]?.stringValue, !user.isEmpty { return .success(.user(user)) }
        return .failure(Failure(error: .unauthenticated("the token has neither \"server\": true nor a user_id"), reason: .tokenInvalid))
    }

    /// The user of a user token; nil for a server token (whose view is a third party's).
    var userID: String? {
        switch self {
        case .server: nil
        case .user(let id): id
        }
    }

    /// `server`, or the user's id: the access log's `caller`.
    var logName: String {
        switch self {
        case .server: "server"
        case .user(let id): id
        }
    }

    /// The user the call acts for. A server token acts for `named` (which may be nil); a user token
    /// acts for itself, and naming anyone else is refused with 403 `not_allowed`.
    func actor(named: String?) throws(WireError) -> String? {
        switch self {
        case .server:
            return named
        case .user(let id):
            if let named, named != id { throw .forbidden("a user token acts only as its own user (\(id)), not as \(named)") }
            return id
        }
    }

    /// Like ``actor(named:)``, but a server-side call must name the user (400 `invalid_argument`).
    func requiredActor(named: String?) throws(WireError) -> String {
        guard let id = try actor(named: named) else { throw .invalid("user_id (or user.id) is required for server-side calls") }
        return id
    }

    /// Refuses user tokens with 403 `not_allowed`.
    func requireServer(_ what: String) throws(WireError) {
        guard self == .server else { throw .forbidden("\(what) needs a server token") }
    }

    /// The user a request body (or query) names: `user_id`, or `user.id`.
    static func named(in body: JSONValue?, query: [String: String] = [:]) throws(WireError) -> String? {
        if let id = try RequestFields.optionalString(body, "user_id") { return id }
        if let user = body?["user"], case .object = user {
            guard let id = user["id"]?.stringValue else { throw .invalid("user.id must be a string") }
            return id
        }
        return query["user_id"]
    }
}
