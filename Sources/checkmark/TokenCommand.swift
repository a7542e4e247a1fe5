import ArgumentParser
import CheckmarkAuth
import CheckmarkCore
import CheckmarkServer

/// `checkmark token`: makes the HS256 tokens Stream's SDKs send, for scripts and first sessions.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a user token ({\"user_id\": ...}) or a server token ({\"server\": true}).",
        discussion: "The secret comes from --api-secret or the CHECKMARK_API_SECRET environment variable.")

    @Option(help: "Make a user token for this user id.") var userID: String?
    @Flag(help: "Make a server token instead.") var server = false
    @Option(help: "Seconds until the token expires (user tokens; none by default).") var expiresIn: Int?
    @Option(help: "The api_secret tokens are signed with.") var apiSecret: String?

    func validate() throws {
        guard (userID != nil) != server else { throw ValidationError("give exactly one of --user-id or --server") }
        guard resolvedSecret() != nil else { throw ValidationError("no secret: pass --api-secret or set CHECKMARK_API_SECRET") }
        if let expiresIn, expiresIn <= 0 { throw ValidationError("--expires-in must be positive") }
    }

    func resolvedSecret() -> String? {
        apiSecret ?? Environment.value("CHECKMARK_API_SECRET")
    }

    func run() throws {
        var claims: [(String, JSONValue)] = server ? [("server", .bool(true))] : [("user_id", .string(userID!))]
        if let expiresIn {
            claims.append(("exp", .number(Double(WallClock.now().rawValue / 1_000_000 + Int64(expiresIn)))))
        }
        print(JWT.sign(claims: .object(claims), secret: resolvedSecret()!))
    }
}
