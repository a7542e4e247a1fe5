import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore

/// A complete HTTP/1.1 request as the routes see it.
package struct HTTPRequest: Sendable {
    package var method: String
    /// The request target as sent, path and query.
    package var uri: String
    package var versionMajor: Int
    package var versionMinor: Int
    package var headers: HTTPHeaderList
    package var body: ByteBuffer
    /// The client's address as the listener saw it (for logging refusals), when known.
    package var peer: String?

    package init(method: String, uri: String, versionMajor: Int = 1, versionMinor: Int = 1, headers: HTTPHeaderList = [:], body: ByteBuffer = ByteBuffer()) {
        self.method = method
        self.uri = uri
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
        self.headers = headers
        self.body = body
    }

    /// The path without the query.
    package var path: String {
        uri.firstIndex(of: "?").map { String(uri[..<$0]) } ?? uri
    }

    /// Query parameters, percent-decoded, first value wins.
    package var query: [String: String] {
        guard let mark = uri.firstIndex(of: "?") else { return [:] }
        var result: [String: String] = [:]
        for pair in uri[uri.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = Self.percentDecode(String(parts[0]))
            let value = parts.count > 1 ? Self.percentDecode(String(parts[1])) : ""
            if result[key] == nil { result[key] = value }
        }
        return result
    }

    /// Decodes `%XX` escapes and `+` as space; malformed escapes are kept as they are.
    static func percentDecode(_ text: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
               let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
