import CheckmarkAuth
import CheckmarkCore
import CheckmarkWebSocket
import CheckmarkWire

/// Checks a `/connect` request (contract: Stream-compatible interface): `api_key` must be the
/// deployment's, `authorization` a user JWT signed with the api_secret whose `user_id` matches the
/// `json` parameter's, and `exp`, when present, in the future. Pure: the time is passed in.
package struct GatewayAuthenticator: Sendable {
    package var apiKey: String
    package var apiSecret: String

    /// The most channels one `/connect` may resume: the per-connection watch limit.
    package var maxResumeChannels: Int
    /// How far ahead of the server's clock a token's `nbf` and `iat` may lie (`token_clock_skew`).
    package var tokenClockSkewSeconds: Double

    package init(apiKey: String, apiSecret: String, maxResumeChannels: Int = GatewayLimits().maxWatchedChannelsPerConnection,
                tokenClockSkewSeconds: Double = JWT.defaultClockSkewSeconds) {
        self.apiKey = apiKey
        self.apiSecret = apiSecret
        self.maxResumeChannels = maxResumeChannels
        self.tokenClockSkewSeconds = tokenClockSkewSeconds
    }

    /// Who connects, and the profile fields sent with the connection.
    package struct Identity: Sendable {
        package var userID: String
        /// `user_details` minus `id`: applied to the user on connect (created if missing).
        package var details: [(String, JSONValue)]
        /// Whether `user_details` was sent at all: without it, an unknown user is refused (4004).
        package var detailsGiven = true
        /// `resume`: channels to watch at once, each with the last `channel_seq` the client saw.
        package var resume: [(ChannelCID, Int64)] = []
    }

    /// A refusal: the error event to send and why (which chooses the close code to end with).
    package struct Refusal: Error, Sendable {
        package var error: WireError
        /// What `checkmark_auth_failures_total` counts it as.
        package var reason: AuthFailureReason
        /// The close code to end with: 4002 for an expired token, else 4001.
        package var closeCode: WebSocketCloseCode { WebSocketCloseCode(.authentication(reason)) }
    }

    package func authenticate(query: [String: String], now: Timestamp) -> Result<Identity, Refusal> {
        guard let key = query["api_key"], key == apiKey else {
            return .failure(Refusal(error: .unauthenticated("api_key is missing or unknown"), reason: .apiKey))
        }
        guard let text = query["json"], let json = try? JSONParser.parse(text), case .object = json else {
            return .failure(Refusal(error: .invalid("the json parameter must be a JSON object with user_id"), reason: .malformedRequest))
        }
        guard let userID = json["user_id"]?.stringValue ?? json["user_details"]?["id"]?.stringValue, !userID.isEmpty,
              userID.utf8.count <= 255 else {
            return .failure(Refusal(error: .invalid("json.user_id is required"), reason: .malformedRequest))
        }
        guard let token = query["authorization"], !token.isEmpty else {
            return .failure(Refusal(error: .unauthenticated("the authorization parameter (a user token) is required"), reason: .tokenMissing))
        }
        let claims: JSONValue
        do {
            claims = try JWT.verify(token, secret: apiSecret, now: now, clockSkewSeconds: tokenClockSkewSeconds)
        } catch {
            return .failure(Refusal(error: WireError(error), reason: AuthFailureReason(error)))
        }
        guard claims["user_id"]?.stringValue == userID else {
            return .failure(Refusal(error: .unauthenticated("the token's user_id does not match json.user_id \(userID)"), reason: .userMismatch))
        }
        let details = (json["user_details"]?.objectValue ?? []).filter { $0.0 != "id" }
        let resume: [(ChannelCID, Int64)]
        do {
            resume = try RequestFields.resumeMap(json["resume"], limit: maxResumeChannels)
        } catch {
            return .failure(Refusal(error: error, reason: .malformedRequest))
        }
        return .success(Identity(userID: userID, details: details, detailsGiven: json["user_details"]?.objectValue != nil, resume: resume))
    }
}
