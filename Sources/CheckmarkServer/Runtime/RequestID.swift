/// The id of one REST request, in its response's `X-Request-Id` header and in every log line about it:
/// the client's own `X-Request-Id` when it is sane (1 to ``maxLength`` characters of letters, digits
/// and `-._~:+/=`), otherwise one the server makes (16 hex digits).
enum RequestID {
    static let header = "X-Request-Id"
    static let maxLength = 128

    /// The client's id if it may be used as it is, else a new one.
    static func accept(_ given: String?) -> String {
        if let given, isSane(given) { return given }
        return generate()
    }

    static func isSane(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= maxLength && id.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "+"),
                 UInt8(ascii: "/"), UInt8(ascii: "="): true
            default: false
            }
        }
    }

    static func generate() -> String {
        let value = UInt64.random(in: .min ... .max)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
