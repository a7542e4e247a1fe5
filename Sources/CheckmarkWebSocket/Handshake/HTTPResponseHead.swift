/// The head of an HTTP/1.1 response, parsed from raw bytes: what a WebSocket client reads back after
/// its upgrade request.
public struct HTTPResponseHead: Sendable, Hashable {
    public var status: Int
    public var reason: String
    public var headers: HTTPHeaderList
    /// Bytes the head took, including the blank line; what follows belongs to the next protocol.
    public var length: Int

    /// Why the bytes are not an HTTP/1.1 response head.
    public struct Malformed: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
    }

    /// Parses a head from the start of `bytes`. Returns nil while the blank line has not arrived yet.
    /// - Throws: ``Malformed`` for a bad status line or header line, or a head over `limit` bytes.
    public static func parse(_ bytes: some Collection<UInt8>, limit: Int = 16 * 1024) throws(Malformed) -> HTTPResponseHead? {
        let data = Array(bytes.prefix(limit + 4))
        var end: Int?
        if data.count >= 4 {
            for i in 0...(data.count - 4) where data[i] == 13 && data[i + 1] == 10 && data[i + 2] == 13 && data[i + 3] == 10 {
                end = i
                break
            }
        }
        guard let end else {
            if data.count > limit { throw Malformed(description: "response head larger than \(limit) bytes") }
            return nil
        }
        let text = String(decoding: data[..<end], as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0",
              parts[1].count == 3, let status = Int(parts[1]) else {
            throw Malformed(description: "bad status line: \(statusLine.prefix(80))")
        }
        var headers = HTTPHeaderList()
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw Malformed(description: "bad header line: \(line.prefix(80))")
            }
            headers.add(String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingWhitespace())
        }
        return HTTPResponseHead(status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers, length: end + 4)
    }
}
