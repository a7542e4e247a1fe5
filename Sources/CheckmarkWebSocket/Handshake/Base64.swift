/// Standard base64 (RFC 4648 section 4) with padding, for handshake keys.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= input.count {
            let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            out += [alphabet[Int(value >> 18 & 63)], alphabet[Int(value >> 12 & 63)],
                    alphabet[Int(value >> 6 & 63)], alphabet[Int(value & 63)]]
            index += 3
        }
        let rest = input.count - index
        if rest == 1 {
            let value = UInt32(input[index]) << 16
            out += [alphabet[Int(value >> 18 & 63)], alphabet[Int(value >> 12 & 63)], UInt8(ascii: "="), UInt8(ascii: "=")]
        } else if rest == 2 {
            let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            out += [alphabet[Int(value >> 18 & 63)], alphabet[Int(value >> 12 & 63)], alphabet[Int(value >> 6 & 63)], UInt8(ascii: "=")]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes padded base64; nil for any character outside the alphabet or a wrong length or padding.
    public static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            var value: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let char = input[index + offset]
                let sixBits: UInt32
                switch char {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): sixBits = UInt32(char - UInt8(ascii: "A"))
                case UInt8(ascii: "a")...UInt8(ascii: "z"): sixBits = UInt32(char - UInt8(ascii: "a") + 26)
                case UInt8(ascii: "0")...UInt8(ascii: "9"): sixBits = UInt32(char - UInt8(ascii: "0") + 52)
                case UInt8(ascii: "+"): sixBits = 62
                case UInt8(ascii: "/"): sixBits = 63
                case UInt8(ascii: "=") where offset >= 2 && index + 4 == input.count:
                    sixBits = 0
                    padding += 1
                default: return nil
                }
                if padding > 0 && char != UInt8(ascii: "=") { return nil }
                value = value << 6 | sixBits
            }
            out.append(UInt8(value >> 16 & 0xFF))
            if padding < 2 { out.append(UInt8(value >> 8 & 0xFF)) }
            if padding < 1 { out.append(UInt8(value & 0xFF)) }
            index += 4
        }
        return out
    }
}
