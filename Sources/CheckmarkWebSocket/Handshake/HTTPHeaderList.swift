/// HTTP header fields in arrival order, with case-insensitive look-up (RFC 7230 section 3.2).
public struct HTTPHeaderList: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    public var fields: [Field]

    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { Field(name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// Every value of the named field.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    /// The comma-separated tokens of every value of the named field, trimmed and lower-cased.
    public func tokens(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }.map { String($0).trimmingWhitespace().lowercased() }
            .filter { !$0.isEmpty }
    }

    public mutating func add(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }
}
