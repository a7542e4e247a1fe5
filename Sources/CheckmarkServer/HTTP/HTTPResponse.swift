import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore

/// A complete HTTP response.
package struct HTTPResponse: Sendable {
    package var status: Int
    package var headers: HTTPHeaderList
    package var body: ByteBuffer

    package init(status: Int, headers: HTTPHeaderList = [:], body: ByteBuffer = ByteBuffer()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A plain-text response.
    package static func text(_ status: Int, _ text: String, headers: HTTPHeaderList = [:]) -> HTTPResponse {
        var all = headers
        all.add("Content-Type", "text/plain; charset=utf-8")
        return HTTPResponse(status: status, headers: all, body: ByteBuffer(string: text + "\n"))
    }

    /// A JSON response from already-encoded bytes.
    package static func json(_ status: Int, _ body: ByteBuffer) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: body)
    }
}
