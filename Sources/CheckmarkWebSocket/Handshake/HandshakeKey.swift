import CLibcrypto

/// The `Sec-WebSocket-Key` / `Sec-WebSocket-Accept` pair (RFC 6455 sections 1.3 and 4.2.2).
public enum HandshakeKey {
    /// The GUID every endpoint appends to the key before hashing (section 1.3).
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `base64(SHA-1(key + GUID))`, with SHA-1 from the system libcrypto.
    public static func acceptValue(forKey key: String) -> String {
        let input = Array((key + guid).utf8)
        var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        input.withUnsafeBufferPointer { bytes in
            _ = SHA1(bytes.baseAddress, bytes.count, &digest)
        }
        return Base64.encode(digest)
    }

    /// Whether `key` is a valid client key: base64 of exactly 16 bytes.
    public static func isValidKey(_ key: String) -> Bool {
        Base64.decode(key)?.count == 16
    }

    /// A key made from 16 random bytes supplied by the caller (the codec has no randomness of its own).
    public static func makeKey(randomBytes: [UInt8]) -> String {
        precondition(randomBytes.count == 16)
        return Base64.encode(randomBytes)
    }
}
