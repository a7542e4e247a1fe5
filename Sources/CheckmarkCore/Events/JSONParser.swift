/// Parses JSON text (RFC 8259) into ``JSONValue``: strict, no Foundation, in time linear in the text,
/// within ``JSONLimits`` (nesting, keys per object, string length).
public enum JSONParser {
    /// Deepest nesting of arrays and objects accepted by default.
    public static let maxDepth = JSONLimits.default.maxDepth

    /// Where and why the text is not JSON, or which limit it passed.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var offset: Int
        public var reason: String
        /// The configuration key of the ``JSONLimits`` limit the text passed; nil for text that is not JSON.
        public var limit: String?
        public var description: String { limit == nil ? "invalid JSON at byte \(offset): \(reason)" : "JSON at byte \(offset): \(reason)" }
    }

    /// An object with more keys than this looks duplicates up in a table instead of scanning.
    static let keyScanLimit = 16

    public static func parse(_ bytes: some Collection<UInt8>, limits: JSONLimits = .default) throws(Failure) -> JSONValue {
        var parser = Parser(bytes: Array(bytes), limits: limits)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.fail("unexpected data after the value") }
        return value
    }

    public static func parse(_ text: String, limits: JSONLimits = .default) throws(Failure) -> JSONValue {
        try parse(Array(text.utf8), limits: limits)
    }

    private struct Parser {
        let bytes: [UInt8]
        let limits: JSONLimits
        var index = 0

        init(bytes: [UInt8], limits: JSONLimits) {
            self.bytes = bytes
            self.limits = limits
        }

        func fail(_ reason: String) -> Failure { Failure(offset: index, reason: reason) }

        func refuse(_ reason: String, limit: String) -> Failure { Failure(offset: index, reason: reason, limit: limit) }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func value(depth: Int) throws(Failure) -> JSONValue {
            guard depth <= limits.maxDepth else { throw refuse("nested deeper than \(limits.maxDepth) (json_max_depth)", limit: "json_max_depth") }
            guard index < bytes.count else { throw fail("unexpected end") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw fail("unexpected character")
            }
        }

        mutating func literal(_ word: String) throws(Failure) {
            let expected = Array(word.utf8)
            guard index + expected.count <= bytes.count, Array(bytes[index..<(index + expected.count)]) == expected else {
                throw fail("expected \(word)")
            }
            index += expected.count
        }

        mutating func object(depth: Int) throws(Failure) -> JSONValue {
            index += 1
            var pairs: [(String, JSONValue)] = []
            // Past a few keys, duplicates are found through a table: linear in the keys, not quadratic.
            var positions: [String: Int] = [:]
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(pairs)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a key") }
                let key = try string()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                skipWhitespace()
                let element = try value(depth: depth + 1)
                let existing: Int? = pairs.count <= JSONParser.keyScanLimit ? pairs.firstIndex { $0.0 == key } : positions[key]
                if let existing {
                    pairs[existing].1 = element  // the last duplicate wins
                } else {
                    guard pairs.count < limits.maxKeysPerObject else {
                        throw refuse("an object has more than \(limits.maxKeysPerObject) keys (json_max_keys)", limit: "json_max_keys")
                    }
                    pairs.append((key, element))
                    if pairs.count == JSONParser.keyScanLimit + 1 {
                        positions.reserveCapacity(pairs.count * 2)
                        for (offset, pair) in pairs.enumerated() { positions[pair.0] = offset }
                    } else if pairs.count > JSONParser.keyScanLimit + 1 {
                        positions[key] = pairs.count - 1
                    }
                }
                skipWhitespace()
                guard index < bytes.count else { throw fail("unexpected end in object") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(pairs) }
                throw fail("expected ',' or '}'")
            }
        }

        mutating func array(depth: Int) throws(Failure) -> JSONValue {
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw fail("unexpected end in array") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                throw fail("expected ',' or ']'")
            }
        }

        mutating func number() throws(Failure) -> Double {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 else { throw fail("expected a digit") }
            if bytes[index] == 0x30 {
                index += 1
            } else {
                while index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 else { throw fail("expected a digit") }
                while index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 else { throw fail("expected a digit") }
                while index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
            }
            guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else { throw fail("bad number") }
            return value
        }

        mutating func string() throws(Failure) -> String {
            index += 1
            // Most strings have no escape: they are made from the text as it stands, with no buffer of
            // their own. At the first escape or control character, the general loop below starts over.
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    guard index - 1 - start <= limits.maxStringBytes else {
                        throw refuse("a string is longer than \(limits.maxStringBytes) bytes (json_max_string)", limit: "json_max_string")
                    }
                    guard let text = String(validating: bytes[start..<(index - 1)], as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
                    return text
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                index += 1
            }
            index = start
            var out: [UInt8] = []
            while true {
                guard index < bytes.count else { throw fail("unterminated string") }
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    guard out.count <= limits.maxStringBytes else {
                        throw refuse("a string is longer than \(limits.maxStringBytes) bytes (json_max_string)", limit: "json_max_string")
                    }
                    guard let text = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
                    return text
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { throw fail("unterminated escape") }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""): out.append(0x22)
                    case UInt8(ascii: "\\"): out.append(0x5C)
                    case UInt8(ascii: "/"): out.append(0x2F)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800...0xDBFF).contains(scalar) {
                            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                                throw fail("lone surrogate")
                            }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw fail("bad surrogate pair") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00...0xDFFF).contains(scalar) {
                            throw fail("lone surrogate")
                        }
                        out.append(contentsOf: String(Unicode.Scalar(scalar)!).utf8)
                    default:
                        throw fail("bad escape")
                    }
                case 0x00..<0x20:
                    throw fail("control character in string")
                default:
                    out.append(byte)
                }
            }
        }

        mutating func hex4() throws(Failure) -> UInt32 {
            guard index + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[index..<(index + 4)], as: UTF8.self), radix: 16) else {
                throw fail("bad \\u escape")
            }
            index += 4
            return value
        }
    }
}
