import CheckmarkAuth
import CheckmarkCore

/// Who is calling the REST API, from the `Authorization` JWT: a server token (`{"server": true}`)
/// may act for any user named in the request; a user token acts only as its own user.
enum RESTCaller: Sendable, Equatable {
    case server
    case user(String)

    /// Who calls, from the `api_key` and the token a request carries (`tokenSource` names where the
    /// token goes, for the error). 401 `unauthenticated` for a missing or wrong key or token.
    static func authenticate(apiKey given: String?, token: String?, tokenSource: String, apiKey: String, apiSecret: String,
                             now: Timestamp) throws(WireError) -> RESTCaller {
        guard let given, !given.isEmpty else { throw .unauthenticated("the api_key query parameter is required") }
        guard given == apiKey else { throw .unauthenticated("api_key \(given) is not valid") }
        guard let token, !token.isEmpty else { throw .unauthenticated("\(tokenSource) (a JWT) is required") }
        let claims: JSONValue
        do { claims = try JWT.verify(token, secret: apiSecret, now: now) } catch { throw WireError(error) }
        if claims["server"]?.boolValue == true { return .server }
        if let user = claims["user_id"]?.stringValue, !user.isEmpty { return .user(user) }
        throw .unauthenticated("the token has neither \"server\": true nor a user_id")
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
