import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore

/// A complete HTTP response.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaderList
    public var body: ByteBuffer

    public init(status: Int, headers: HTTPHeaderList = [:], body: ByteBuffer = ByteBuffer()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A plain-text response.
    public static func text(_ status: Int, _ text: String, headers: HTTPHeaderList = [:]) -> HTTPResponse {
        var all = headers
        all.add("Content-Type", "text/plain; charset=utf-8")
        return HTTPResponse(status: status, headers: all, body: ByteBuffer(string: text + "\n"))
    }

    /// A JSON response from already-encoded bytes.
    public static func json(_ status: Int, _ body: ByteBuffer) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: body)
    }
}
