import CheckmarkWebSocket
import FuzzSupport

/// libFuzzer entry point for the upgrade path: the input is read as an HTTP head whose header lines
/// go through the server handshake, and as a response head for the client side.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHandshake(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
    let requestLine = lines.isEmpty ? "" : lines.removeFirst()
    var headers = HTTPHeaderList()
    for line in lines {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers.add(String(line[..<colon]), String(line[line.index(after: colon)...]))
    }
    let method = String(requestLine.split(separator: " ").first ?? "GET")
    let handshake = ServerHandshake(subprotocols: ["chat", "v2.stream"], compression: PerMessageDeflateConfiguration())
    if case .success(let accepted) = handshake.negotiate(method: method, versionMajor: 1, versionMinor: 1, headers: headers) {
        precondition(accepted.headers.values("Sec-WebSocket-Accept").count == 1)
    }
    _ = ExtensionHeader.parse(headers.values("Sec-WebSocket-Extensions"))
    let client = ClientHandshake(host: "h", path: "/", key: "dGhlIHNhbXBsZSBub25jZQ==", compression: PerMessageDeflateConfiguration())
    if let head = try? HTTPResponseHead.parse(bytes, limit: 4096) {
        _ = client.validate(status: head.status, headers: head.headers)
    }
    return 0
}

@_cdecl("FuzzHandshake_main")
public func fuzzHandshakeMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { fuzzHandshake($0, $1) }
}
