import CheckmarkClient
import CheckmarkCore
import CheckmarkWebSocket
import Foundation
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// A `/connect` client that reads its socket no faster than a given rate, as a client on a slow link
/// does: the server sees it drain at that pace (its socket stays unwritable in between). Blocking:
/// run it off the test's cooperative threads, and on one thread at a time (hence unchecked Sendable).
/// Frames go through Checkmark's own client-role connection, with permessage-deflate when the server
/// agrees to it.
final class PacedClient: @unchecked Sendable {
    let socket: RawSocket
    private var connection: WebSocketConnection
    private var pending: [String] = []
    /// Bytes read from the socket so far.
    private(set) var bytesRead = 0

    /// Connects `userID` (with `resume` named on connect, when given) and waits for the 101.
    init(port: Int, userID: String, resume: [(ChannelCID, Int64)] = [], compression: Bool = true,
         receiveBufferSize: Int32 = 16 * 1024) throws {
        socket = try RawSocket(port: port, receiveBufferSize: receiveBufferSize)
        var fields: [(String, JSONValue)] = [("user_id", .string(userID))]
        if !resume.isEmpty { fields.append(("resume", .object(resume.map { ($0.0.description, .number(Double($0.1))) }))) }
        var json = JSONWriter()
        json.value(.object(fields))
        let query = "json=\(ChatConnection.percentEncode(String(decoding: json.bytes, as: UTF8.self)))&api_key=\(TestServer.apiKey)"
            + "&authorization=\(TestServer.token(userID))"
        let handshake = ClientHandshake(host: "127.0.0.1", path: "/connect?" + query,
                                        key: HandshakeKey.makeKey(randomBytes: (0..<16).map { _ in UInt8.random(in: 0...255) }),
                                        compression: compression ? PerMessageDeflateConfiguration() : .disabled)
        socket.send(handshake.requestHead)
        let head = socket.read(until: Array("\r\n\r\n".utf8))
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers = HTTPHeaderList()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        let agreement = try handshake.validate(status: status, headers: headers).get()
        connection = WebSocketConnection(role: .client, compression: agreement.compression,
                                         maskingKeys: { WebSocketMaskingKey(UInt32.random(in: .min ... .max)) })
    }

    /// Sends one text message.
    func send(_ text: String) {
        _ = connection.sendText(ByteBuffer(string: text))
        for bytes in connection.takeOutbound() { socket.send(Array(buffer: bytes)) }
    }

    /// The next text message, reading at most `bytesPerSecond` (counted from `since`, over `total`
    /// bytes read by then); nil when the socket closed or nothing came within its timeout. A close
    /// frame ends it too, its code in `closeCode`.
    func nextText(bytesPerSecond: Int, since start: Date) -> String? {
        while pending.isEmpty {
            while let event = connection.nextEvent() {
                switch event {
                case .text(let text): pending.append(String(buffer: text))
                case .closeReceived(let code, _):
                    closeCode = code
                    return nil
                case .failed: return nil
                case .binary, .ping, .pong: break
                }
                for bytes in connection.takeOutbound() { socket.send(Array(buffer: bytes)) }
            }
            guard pending.isEmpty else { break }
            // Paced: wait until the bytes read so far are due at the rate.
            let due = start.addingTimeInterval(Double(bytesRead) / Double(bytesPerSecond))
            let wait = due.timeIntervalSinceNow
            if wait > 0 { usleep(useconds_t(wait * 1_000_000)) }
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let n = chunk.withUnsafeMutableBytes { recv(socket.fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return nil }
            bytesRead += n
            connection.receive(ByteBuffer(bytes: chunk[0..<n]))
        }
        return pending.removeFirst()
    }

    private(set) var closeCode: WebSocketCloseCode?
}
