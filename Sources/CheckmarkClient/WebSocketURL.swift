/// A `ws://host[:port][/path][?query]` address.
public struct WebSocketURL: Sendable, Hashable {
    public var host: String
    public var port: Int
    /// Path and query, starting with `/`.
    public var target: String

    public init(host: String, port: Int, target: String = "/") {
        self.host = host
        self.port = port
        self.target = target
    }

    /// Parses `ws://`; nil for anything else (`wss://` goes through a TLS proxy such as nginx).
    public init?(_ text: String) {
        guard text.hasPrefix("ws://") else { return nil }
        let rest = text.dropFirst(5)
        let slash = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<slash]
        var target = String(rest[slash...])
        if target.isEmpty { target = "/" } else if target.hasPrefix("?") { target = "/" + target }
        var host = String(authority)
        var port = 80
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            guard let value = Int(authority[authority.index(after: colon)...]), (1...65535).contains(value) else { return nil }
            host = String(authority[..<colon])
            port = value
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self.init(host: host, port: port, target: target)
    }

    /// The Host header value.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == 80 ? name : "\(name):\(port)"
    }
}
