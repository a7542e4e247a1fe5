/// One element of a `Sec-WebSocket-Extensions` header (RFC 6455 section 9.1): an extension name and
/// its parameters, in order, values unquoted.
public struct ExtensionHeader: Sendable, Hashable {
    public var name: String
    public var parameters: [(name: String, value: String?)]

    public init(name: String, parameters: [(name: String, value: String?)] = []) {
        self.name = name
        self.parameters = parameters
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.name == rhs.name && lhs.parameters.count == rhs.parameters.count
            && zip(lhs.parameters, rhs.parameters).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        for parameter in parameters {
            hasher.combine(parameter.name)
            hasher.combine(parameter.value)
        }
    }

    /// Parses every element of one or more header values (repeated headers are one comma list).
    /// Returns nil when the syntax is broken (an empty name, an unterminated quote).
    public static func parse(_ values: [String]) -> [ExtensionHeader]? {
        var result: [ExtensionHeader] = []
        for value in values {
            for element in split(value, separator: ",") {
                let parts = split(element, separator: ";").map { $0.trimmingWhitespace() }
                guard let name = parts.first, !name.isEmpty, isToken(name) else {
                    if parts.allSatisfy({ $0.isEmpty }) { continue }  // tolerate empty list elements
                    return nil
                }
                var header = ExtensionHeader(name: name.lowercased())
                for part in parts.dropFirst() {
                    if let equals = part.firstIndex(of: "=") {
                        let key = String(part[..<equals]).trimmingWhitespace()
                        var value = String(part[part.index(after: equals)...]).trimmingWhitespace()
                        if value.hasPrefix("\"") {
                            guard value.count >= 2, value.hasSuffix("\"") else { return nil }
                            value = String(value.dropFirst().dropLast())
                        }
                        guard isToken(key), !value.isEmpty else { return nil }
                        header.parameters.append((key.lowercased(), value))
                    } else {
                        guard isToken(part) else { return nil }
                        header.parameters.append((part.lowercased(), nil))
                    }
                }
                result.append(header)
            }
        }
        return result
    }

    /// The header value that announces this element.
    public var headerValue: String {
        var out = name
        for parameter in parameters {
            out += "; " + parameter.name
            if let value = parameter.value { out += "=" + value }
        }
        return out
    }

    /// Splits on `separator` outside double quotes.
    static func split(_ text: String, separator: Character) -> [String] {
        var parts: [String] = []
        var current = ""
        var quoted = false
        for character in text {
            if character == "\"" { quoted.toggle() }
            if character == separator && !quoted {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current)
        return parts
    }

    /// RFC 7230 token characters.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = lastIndex(where: { !isSpace($0) })!
        return String(self[start...end])
    }
}
