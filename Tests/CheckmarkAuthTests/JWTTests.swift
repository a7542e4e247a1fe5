import CheckmarkAuth
import CheckmarkCore
import Testing

/// RFC 7519 HS256 tokens as Stream's SDKs make and send them.
@Suite("JWT HS256")
struct JWTTests {
    static let now = Timestamp(rawValue: 1_763_000_000_000_000)

    @Test func verifiesATokenMadeByAnotherImplementation() throws {
        // Made with PyJWT: jwt.encode({"user_id": "ana"}, "secret", algorithm="HS256").
        let token = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1c2VyX2lkIjoiYW5hIn0.wFRyJ70AHsWnZu59BU6NAscb6xCyYOu_YEzCpXmydBw"
        let claims = try JWT.verify(token, secret: "secret", now: Self.now)
        #expect(claims["user_id"]?.stringValue == "ana")
    }

    @Test func signedTokensVerifyAndCarryTheirClaims() throws {
        let token = JWT.sign(claims: .object([("server", .bool(true))]), secret: "s3cret")
        #expect(try JWT.verify(token, secret: "s3cret", now: Self.now)["server"]?.boolValue == true)
    }

    @Test func wrongSecretIsRefused() {
        let token = JWT.sign(claims: .object([("user_id", .string("ana"))]), secret: "right")
        #expect(throws: JWTError.badSignature) { try JWT.verify(token, secret: "wrong", now: Self.now) }
    }

    @Test func expiredTokenIsRefused() {
        let token = JWT.sign(claims: .object([("user_id", .string("ana")), ("exp", .number(1_762_999_999))]), secret: "s")
        #expect(throws: JWTError.expired) { try JWT.verify(token, secret: "s", now: Self.now) }
        let later = JWT.sign(claims: .object([("user_id", .string("ana")), ("exp", .number(1_763_000_100))]), secret: "s")
        #expect(throws: Never.self) { try JWT.verify(later, secret: "s", now: Self.now) }
    }

    /// Regression (issue 18): a signature with base64 padding, or with its unused trailing bits
    /// altered, decoded to the same bytes and verified.
    @Test func otherSpellingsOfTheSignatureAreRefused() throws {
        let token = JWT.sign(claims: .object([("user_id", .string("ana"))]), secret: "s")
        #expect(throws: Never.self) { try JWT.verify(token, secret: "s", now: Self.now) }
        #expect(throws: JWTError.badSignature) { try JWT.verify(token + "=", secret: "s", now: Self.now) }
        // The last of 43 characters carries 2 unused bits: flip the lowest one.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = try #require(token.last)
        let index = try #require(alphabet.firstIndex(of: last))
        let altered = String(token.dropLast()) + String(alphabet[index ^ 1])
        #expect(throws: JWTError.badSignature) { try JWT.verify(altered, secret: "s", now: Self.now) }
    }

    /// Regression (issue 18): `nbf` and `iat` in the future were accepted.
    @Test func tokensNotValidYetAreRefused() {
        for claim in ["nbf", "iat"] {
            let future = JWT.sign(claims: .object([("user_id", .string("ana")), (claim, .number(1_763_000_000 + 3_600))]), secret: "s")
            #expect(throws: JWTError.notYetValid(claim: claim)) { try JWT.verify(future, secret: "s", now: Self.now) }
            // Within the allowed clock skew, and in the past, they are fine.
            let skewed = JWT.sign(claims: .object([("user_id", .string("ana")), (claim, .number(1_763_000_000 + 30))]), secret: "s")
            #expect(throws: Never.self) { try JWT.verify(skewed, secret: "s", now: Self.now) }
        }
    }

    @Test(arguments: ["", "abc", "a.b", "a.b.c.d", "!!.??.**", "e30.e30"])
    func malformedTokensAreRefused(token: String) {
        #expect(throws: JWTError.malformed) { try JWT.verify(token, secret: "s", now: Self.now) }
    }

    @Test func otherAlgorithmsAreRefused() {
        // {"alg":"none"} . {"user_id":"ana"} . (empty)
        #expect(throws: JWTError.unsupportedAlgorithm("none")) {
            try JWT.verify("eyJhbGciOiJub25lIn0.eyJ1c2VyX2lkIjoiYW5hIn0.", secret: "s", now: Self.now)
        }
    }
}
