import CheckmarkCore
import CheckmarkWebSocket
import NIOCore

/// `GET /demo`: one self-contained HTML page (inline CSS and JavaScript, nothing fetched from
/// elsewhere) where two or three people chat in one channel and watch their messages' checks turn
/// from one gray (sent) to two gray (delivered) to two blue (read).
///
/// The page is an ordinary client of the public API: it connects to `/connect` and calls the REST
/// routes with tokens, as a Stream SDK does; nothing on the server knows it exists beyond serving it.
/// With the development credentials the page receives the api_key and the (public, loopback-only)
/// development secret and signs its own tokens; with any other credentials it receives only the
/// api_key and asks for a user token to be pasted.
struct DemoPage: Sendable {
    /// Where the page is served.
    static let path = "/demo"
    /// The route label of `GET /demo` in `checkmark_http_requests_total` and the access log.
    static let routeName = "demo"
    /// The channel type the page creates (delivery events on) and the channel it talks in.
    static let channelType = "receipts-demo"
    static let channelID = "demo"

    let html: String

    /// - Parameters:
    ///   - apiKey: the deployment's api_key (public: every client sends it).
    ///   - developmentSecret: the development api_secret, or nil when the deployment has its own.
    init(apiKey: String, developmentSecret: String?) {
        var w = JSONWriter()
        w.beginObject()
        w.field("apiKey", apiKey)
        w.key("secret")
        if let developmentSecret { w.string(developmentSecret) } else { w.null() }
        w.field("channelType", Self.channelType)
        w.field("channelID", Self.channelID)
        w.endObject()
        // Inside <script>, "</" could end the element: JSON allows "<" to be written as \u003c.
        let config = String(decoding: w.bytes, as: UTF8.self).split(separator: "<", omittingEmptySubsequences: false)
            .joined(separator: "\\u003c")
        html = DemoPageHTML.template.split(separator: DemoPageHTML.configMarker, omittingEmptySubsequences: false)
            .joined(separator: config)
    }

    /// The 200 answer with the page.
    var response: HTTPResponse {
        HTTPResponse(status: 200, headers: [
            "Content-Type": "text/html; charset=utf-8",
            "Cache-Control": "no-store",
            // The page loads nothing from elsewhere, and talks only to the server that served it.
            "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self' ws: wss:; img-src data:; base-uri 'none'; form-action 'none'",
        ], body: ByteBuffer(string: html))
    }
}
