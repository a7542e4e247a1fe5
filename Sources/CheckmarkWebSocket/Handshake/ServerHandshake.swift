/// The server side of the opening handshake (RFC 6455 section 4.2): decides, from an HTTP/1.1 request
/// head, whether to switch protocols, and with which subprotocol and extensions.
public struct ServerHandshake: Sendable {
    /// Subprotocols this server speaks, in its order of preference; the client's order wins.
    public var subprotocols: [String]
    public var compression: PerMessageDeflateConfiguration
    /// Decides whether a request from this `Origin` (nil when absent) may connect; 403 otherwise.
    public var originPolicy: @Sendable (String?) -> Bool

    public init(
        subprotocols: [String] = [], compression: PerMessageDeflateConfiguration = .init(),
        originPolicy: @escaping @Sendable (String?) -> Bool = { _ in true }
    ) {
        self.subprotocols = subprotocols
        self.compression = compression
        self.originPolicy = originPolicy
    }

    /// A successful negotiation: the 101 response's headers and what was agreed.
    public struct Acceptance: Sendable, Hashable {
        public var headers: HTTPHeaderList
        public var subprotocol: String?
        public var compression: PerMessageDeflateParameters?
    }

    /// A refusal: the HTTP status, a human-readable reason for the body, and headers to add.
    public struct Rejection: Error, Sendable, Hashable {
        public var status: Int
        public var reason: String
        public var headers: HTTPHeaderList
    }

    /// Validates an upgrade request.
    /// - Returns: the acceptance, or a rejection: 405 for a method other than GET, 426 with
    ///   `Sec-WebSocket-Version: 13` for a missing upgrade or another version, 403 when the origin
    ///   policy refuses, 400 with a reason for anything else malformed.
    public func negotiate(
        method: String, versionMajor: Int, versionMinor: Int, headers: HTTPHeaderList
    ) -> Result<Acceptance, Rejection> {
        func reject(_ status: Int, _ reason: String, _ extra: HTTPHeaderList = [:]) -> Result<Acceptance, Rejection> {
            .failure(Rejection(status: status, reason: reason, headers: extra))
        }
        guard method == "GET" else { return reject(405, "WebSocket upgrades use GET", ["Allow": "GET"]) }
        guard versionMajor > 1 || (versionMajor == 1 && versionMinor >= 1) else {
            return reject(400, "WebSocket upgrades need HTTP/1.1")
        }
        let upgrade = headers.tokens("Upgrade")
        let upgradeRequired: HTTPHeaderList = ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13"]
        guard !upgrade.isEmpty else { return reject(426, "this endpoint speaks WebSocket only", upgradeRequired) }
        guard upgrade.contains("websocket") else { return reject(400, "Upgrade must include websocket") }
        guard headers.tokens("Connection").contains("upgrade") else {
            return reject(400, "Connection must include Upgrade")
        }
        guard headers.values("Host").count == 1 else { return reject(400, "exactly one Host header is required") }
        let versions = headers.values("Sec-WebSocket-Version").map { $0.trimmingWhitespace() }
        guard versions == ["13"] else {
            return reject(426, "unsupported Sec-WebSocket-Version; this server speaks 13", ["Sec-WebSocket-Version": "13"])
        }
        let keys = headers.values("Sec-WebSocket-Key").map { $0.trimmingWhitespace() }
        guard keys.count == 1, HandshakeKey.isValidKey(keys[0]) else {
            return reject(400, "Sec-WebSocket-Key must be one base64 value of 16 bytes")
        }
        let origins = headers.values("Origin")
        guard origins.count <= 1, originPolicy(origins.first) else { return reject(403, "origin not allowed") }

        var response: HTTPHeaderList = [
            "Upgrade": "websocket", "Connection": "Upgrade",
            "Sec-WebSocket-Accept": HandshakeKey.acceptValue(forKey: keys[0]),
        ]
        let offeredProtocols = headers.tokens("Sec-WebSocket-Protocol")
        let subprotocol = offeredProtocols.first { offered in subprotocols.contains { $0.lowercased() == offered } }
            .flatMap { offered in subprotocols.first { $0.lowercased() == offered } }
        if let subprotocol { response.add("Sec-WebSocket-Protocol", subprotocol) }

        guard let offers = ExtensionHeader.parse(headers.values("Sec-WebSocket-Extensions")) else {
            return reject(400, "malformed Sec-WebSocket-Extensions")
        }
        let agreed = compression.accept(offers: offers)
        if let agreed { response.add("Sec-WebSocket-Extensions", agreed.responseHeader.headerValue) }
        return .success(Acceptance(headers: response, subprotocol: subprotocol, compression: agreed))
    }
}
