/// The client side of the opening handshake (RFC 6455 section 4.1): the request to send and the
/// checks on the server's response.
public struct ClientHandshake: Sendable {
    public var host: String
    public var path: String
    public var key: String
    public var subprotocols: [String]
    public var compression: PerMessageDeflateConfiguration
    public var extraHeaders: HTTPHeaderList

    /// - Parameter key: from ``HandshakeKey/makeKey(randomBytes:)`` with fresh random bytes.
    public init(
        host: String, path: String, key: String, subprotocols: [String] = [],
        compression: PerMessageDeflateConfiguration = .disabled, extraHeaders: HTTPHeaderList = [:]
    ) {
        self.host = host
        self.path = path
        self.key = key
        self.subprotocols = subprotocols
        self.compression = compression
        self.extraHeaders = extraHeaders
    }

    /// The request head's fields.
    public var requestHeaders: HTTPHeaderList {
        var headers: HTTPHeaderList = [
            "Host": host, "Upgrade": "websocket", "Connection": "Upgrade",
            "Sec-WebSocket-Key": key, "Sec-WebSocket-Version": "13",
        ]
        if !subprotocols.isEmpty { headers.add("Sec-WebSocket-Protocol", subprotocols.joined(separator: ", ")) }
        if compression.isEnabled { headers.add("Sec-WebSocket-Extensions", compression.offer.headerValue) }
        headers.fields += extraHeaders.fields
        return headers
    }

    /// The whole request head as bytes.
    public var requestHead: String {
        var text = "GET \(path) HTTP/1.1\r\n"
        for field in requestHeaders.fields { text += "\(field.name): \(field.value)\r\n" }
        return text + "\r\n"
    }

    /// What the server agreed to.
    public struct Agreement: Sendable, Hashable {
        public var subprotocol: String?
        public var compression: PerMessageDeflateParameters?
    }

    /// Why a response does not complete the handshake (the client must fail the connection).
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
    }

    /// Checks the server's response (section 4.1, the client's steps 1-6 after sending).
    public func validate(status: Int, headers: HTTPHeaderList) -> Result<Agreement, Failure> {
        func fail(_ text: String) -> Result<Agreement, Failure> { .failure(Failure(description: text)) }
        guard status == 101 else { return fail("server answered \(status), not 101") }
        guard headers.tokens("Upgrade").contains("websocket") else { return fail("missing Upgrade: websocket") }
        guard headers.tokens("Connection").contains("upgrade") else { return fail("missing Connection: Upgrade") }
        let accepts = headers.values("Sec-WebSocket-Accept").map { $0.trimmingWhitespace() }
        guard accepts == [HandshakeKey.acceptValue(forKey: key)] else { return fail("wrong Sec-WebSocket-Accept") }
        var agreement = Agreement()
        let protocols = headers.tokens("Sec-WebSocket-Protocol")
        if let chosen = protocols.first {
            guard protocols.count == 1, let match = subprotocols.first(where: { $0.lowercased() == chosen }) else {
                return fail("server chose a subprotocol that was not offered")
            }
            agreement.subprotocol = match
        }
        guard let extensions = ExtensionHeader.parse(headers.values("Sec-WebSocket-Extensions")) else {
            return fail("malformed Sec-WebSocket-Extensions")
        }
        for element in extensions {
            guard compression.isEnabled, agreement.compression == nil,
                  let agreed = compression.validate(response: element)
            else { return fail("server answered with an extension that was not offered: \(element.headerValue)") }
            agreement.compression = agreed
        }
        return .success(agreement)
    }
}
