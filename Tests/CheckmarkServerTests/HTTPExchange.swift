import Foundation

/// One plain HTTP/1.1 request over a raw socket and its whole answer, headers included (for tests
/// that check response headers).
struct HTTPExchange {
    var status: Int
    /// Header fields in arrival order.
    var headers: [(name: String, value: String)]
    var body: String

    /// The first value of the named header (case-insensitive).
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    static func send(port: Int, _ method: String, _ path: String, body: String = "", headers: [String: String] = [:]) throws -> HTTPExchange {
        let socket = try RawSocket(port: port)
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { request += "\(name): \(value)\r\n" }
        socket.send(request + "\r\n" + body)
        let response = String(decoding: socket.readAll(), as: UTF8.self)
        guard let end = response.range(of: "\r\n\r\n") else { return HTTPExchange(status: 0, headers: [], body: "") }
        let lines = response[..<end.lowerBound].split(separator: "\r\n")
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        let fields = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...].drop(while: { $0 == " " })))
        }
        return HTTPExchange(status: status, headers: fields, body: String(response[end.upperBound...]))
    }
}
