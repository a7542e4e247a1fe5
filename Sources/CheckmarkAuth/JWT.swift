import CLibcrypto
import CheckmarkCore

/// HS256 JSON Web Tokens (RFC 7519) as Stream's SDKs make them: `{"server": true}` for server-side
/// calls, `{"user_id": "..."}` (optionally with `exp`) for a user. HMAC-SHA256 comes from the system
/// libcrypto; verification compares signatures in constant time.
package enum JWT {
    /// Signs `claims` (a JSON object) with `secret`.
    package static func sign(claims: JSONValue, secret: String) -> String {
        var header = JSONWriter(capacity: 32)
        header.value(.object([("alg", .string("HS256")), ("typ", .string("JWT"))]))
        var body = JSONWriter(capacity: 64)
        body.value(claims)
        let signingInput = base64URL(header.bytes) + "." + base64URL(body.bytes)
        return signingInput + "." + base64URL(hmacSHA256(key: Array(secret.utf8), message: Array(signingInput.utf8)))
    }

    /// How far in the future `nbf` and `iat` may lie by default (clocks of the token's signer and of
    /// this server differ a little); further, the token is refused (setting `token_clock_skew`).
    package static let defaultClockSkewSeconds = 60.0

    /// Verifies the signature (its text must be the canonical base64url of the expected one: no
    /// padding, no altered trailing bits), `exp`, `nbf` and `iat` (seconds since 1970, compared with
    /// `now`; `nbf` and `iat` may lie up to `clockSkewSeconds` ahead of it), and returns the claims.
    /// - Throws: ``JWTError``.
    package static func verify(_ token: String, secret: String, now: Timestamp,
                              clockSkewSeconds: Double = defaultClockSkewSeconds) throws(JWTError) -> JSONValue {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = decodeBase64URL(parts[0]), let claimBytes = decodeBase64URL(parts[1]),
              let signature = decodeBase64URL(parts[2]),
              let header = try? JSONParser.parse(headerBytes), let claims = try? JSONParser.parse(claimBytes),
              case .object = header, case .object = claims
        else { throw .malformed }
        let alg = header["alg"]?.stringValue ?? ""
        guard alg == "HS256" else { throw .unsupportedAlgorithm(alg) }
        let expected = hmacSHA256(key: Array(secret.utf8), message: Array((parts[0] + "." + parts[1]).utf8))
        // The text is compared, not the decoded bytes: another spelling of the same bytes is refused.
        guard signature.count == expected.count, constantTimeEqual(Array(base64URL(expected).utf8), Array(parts[2].utf8)) else {
            throw .badSignature
        }
        let seconds = Double(now.rawValue) / 1_000_000
        if let exp = claims["exp"] {
            guard case .number(let value) = exp else { throw .malformed }
            if seconds >= value { throw .expired }
        }
        for claim in ["nbf", "iat"] {
            guard let time = claims[claim] else { continue }
            guard case .number(let value) = time else { throw .malformed }
            if value > seconds + clockSkewSeconds { throw .notYetValid(claim: claim) }
        }
        return claims
    }

    package static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        key.withUnsafeBufferPointer { keyBytes in
            message.withUnsafeBufferPointer { messageBytes in
                _ = HMAC(EVP_sha256(), keyBytes.baseAddress, Int32(keyBytes.count), messageBytes.baseAddress, messageBytes.count, &digest, &length)
            }
        }
        return Array(digest.prefix(Int(length)))
    }

    package static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Base64url without padding (RFC 7515 section 2).
    static func base64URL(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = UInt32(bytes[i])
            let b1 = i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0
            let b2 = i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0
            let value = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
            if i + 1 < bytes.count { out.append(alphabet[Int(value >> 6 & 63)]) }
            if i + 2 < bytes.count { out.append(alphabet[Int(value & 63)]) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decodeBase64URL(_ text: Substring) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for char in text.utf8 {
            let value: UInt32
            switch char {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(char - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(char - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(char - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "-"), UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "_"), UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="): continue
            default: return nil
            }
            buffer = buffer << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return out
    }
}
