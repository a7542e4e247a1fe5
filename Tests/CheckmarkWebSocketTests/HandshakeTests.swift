import CheckmarkWebSocket
import Testing

/// RFC 6455 sections 1.3 and 4: the opening handshake on both sides.
@Suite("RFC 6455 §4 opening handshake")
struct HandshakeTests {
    static let validHeaders: HTTPHeaderList = [
        "Host": "server.example.com", "Upgrade": "websocket", "Connection": "Upgrade",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13",
    ]

    static func negotiate(_ headers: HTTPHeaderList, method: String = "GET", handshake: ServerHandshake = .init()) -> Result<ServerHandshake.Acceptance, ServerHandshake.Rejection> {
        handshake.negotiate(method: method, versionMajor: 1, versionMinor: 1, headers: headers)
    }

    static func without(_ name: String, plus extra: [(String, String)] = []) -> HTTPHeaderList {
        var headers = validHeaders
        headers.fields.removeAll { $0.name == name }
        for (key, value) in extra { headers.add(key, value) }
        return headers
    }

    @Test func acceptValueMatchesSection13Example() {
        #expect(HandshakeKey.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func validRequestIsAccepted() throws {
        let accepted = try Self.negotiate(Self.validHeaders).get()
        #expect(accepted.headers.values("Sec-WebSocket-Accept") == ["s3pPLMBiTxaQ9kYGzzhZRbK+xOo="])
        #expect(accepted.compression == nil)
    }

    @Test func tokenListsAreCaseInsensitive() throws {
        let headers = Self.without("Connection", plus: [("connection", "keep-alive, UPGRADE")])
        _ = try Self.negotiate(headers).get()
    }

    @Test(arguments: [
        ("POST", without("Nothing"), 405),
        ("GET", without("Upgrade"), 426),
        ("GET", without("Upgrade", plus: [("Upgrade", "h2c")]), 400),
        ("GET", without("Connection", plus: [("Connection", "keep-alive")]), 400),
        ("GET", without("Host"), 400),
        ("GET", without("Sec-WebSocket-Version", plus: [("Sec-WebSocket-Version", "8")]), 426),
        ("GET", without("Sec-WebSocket-Key"), 400),
        ("GET", without("Sec-WebSocket-Key", plus: [("Sec-WebSocket-Key", "c2hvcnQ=")]), 400),
        ("GET", without("Sec-WebSocket-Key", plus: [("Sec-WebSocket-Key", "not base64 at all!!!!!!!")]), 400),
    ])
    func malformedRequestsAreRefusedWithAStatusAndAReason(method: String, headers: HTTPHeaderList, status: Int) {
        guard case .failure(let rejection) = Self.negotiate(headers, method: method) else {
            Issue.record("accepted")
            return
        }
        #expect(rejection.status == status)
        #expect(!rejection.reason.isEmpty)
        if status == 426 { #expect(rejection.headers.values("Sec-WebSocket-Version") == ["13"]) }
    }

    @Test func originPolicyRefusesWith403() {
        let handshake = ServerHandshake(originPolicy: { $0 == "https://good.example" })
        let headers = Self.without("Origin", plus: [("Origin", "https://evil.example")])
        guard case .failure(let rejection) = Self.negotiate(headers, handshake: handshake) else {
            Issue.record("accepted")
            return
        }
        #expect(rejection.status == 403)
    }

    @Test func subprotocolFollowsClientPreference() throws {
        let handshake = ServerHandshake(subprotocols: ["b", "a"])
        let headers = Self.without("X", plus: [("Sec-WebSocket-Protocol", "c, a, b")])
        #expect(try Self.negotiate(headers, handshake: handshake).get().subprotocol == "a")
    }

    @Test func clientValidatesTheServersResponse() {
        let client = ClientHandshake(host: "h", path: "/", key: "dGhlIHNhbXBsZSBub25jZQ==")
        let good: HTTPHeaderList = ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="]
        #expect((try? client.validate(status: 101, headers: good).get()) != nil)
        var wrong = good
        wrong.fields[2].value = "AAAAAAAAAAAAAAAAAAAAAAAAAAA="
        #expect((try? client.validate(status: 101, headers: wrong).get()) == nil)
        #expect((try? client.validate(status: 200, headers: good).get()) == nil)
        var unoffered = good
        unoffered.add("Sec-WebSocket-Extensions", "permessage-deflate")
        #expect((try? client.validate(status: 101, headers: unoffered).get()) == nil)
    }

    @Test func base64RoundTripsAndRejectsGarbage() {
        for length in 0..<20 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
        #expect(Base64.decode("abc") == nil)
        #expect(Base64.decode("ab=c") == nil)
        #expect(Base64.decode("a!==") == nil)
    }
}
