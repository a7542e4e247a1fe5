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
