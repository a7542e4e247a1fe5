/// A channel's full id, `type:id`.
public struct ChannelCID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var type: String
    public var id: String

    public init(type: String, id: String) {
        self.type = type
        self.id = id
    }

    /// Parses `type:id`; nil unless both parts are valid names.
    public init?(_ text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let type = String(text[..<colon])
        let id = String(text[text.index(after: colon)...])
        guard Self.isValidName(type), Self.isValidName(id) else { return nil }
        self.init(type: type, id: id)
    }

    public var description: String { "\(type):\(id)" }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.description < rhs.description }

    /// Letters, digits and `-_!@` as Stream allows for ids, 1 to 64 bytes.
    public static func isValidName(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "!"),
                UInt8(ascii: "@"):
                true
            default: false
            }
        }
    }
}
