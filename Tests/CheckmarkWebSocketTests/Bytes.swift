import CheckmarkWebSocket
import NIOCore

/// Helpers for tests written with literal bytes.
extension ByteBuffer {
    init(hex: String) {
        var bytes: [UInt8] = []
        var digits = hex.filter { !$0.isWhitespace }[...]
        while digits.count >= 2 {
            bytes.append(UInt8(digits.prefix(2), radix: 16)!)
            digits = digits.dropFirst(2)
        }
        self.init(bytes: bytes)
    }

    var bytes: [UInt8] { getBytes(at: readerIndex, length: readableBytes) ?? [] }
}

/// Feeds `input` to a fresh server connection and collects every event and every byte written back.
func drive(_ input: [UInt8], role: WebSocketRole = .server, limits: WebSocketLimits = .default,
           compression: PerMessageDeflateParameters? = nil, chunk: Int? = nil) -> (events: [WebSocketEvent], written: [UInt8], state: WebSocketConnection.State) {
    var connection = WebSocketConnection(
        role: role, limits: limits, compression: compression,
        maskingKeys: role == .client ? { @Sendable in WebSocketMaskingKey(1, 2, 3, 4) } : nil)
    var events: [WebSocketEvent] = []
    var written: [UInt8] = []
    let size = chunk ?? max(input.count, 1)
    var offset = 0
    repeat {
        let end = min(offset + size, input.count)
        connection.receive(ByteBuffer(bytes: input[offset..<end]))
        while let event = connection.nextEvent() { events.append(event) }
        for buffer in connection.takeOutbound() { written += buffer.bytes }
        offset = end
    } while offset < input.count
    return (events, written, connection.state)
}

/// A client frame: masked with key 37 fa 21 3d, as in RFC 6455 section 5.7.
func maskedFrame(_ first: UInt8, _ payload: [UInt8], key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]) -> [UInt8] {
    var out: [UInt8] = [first]
    if payload.count < 126 {
        out.append(0x80 | UInt8(payload.count))
    } else if payload.count <= 0xFFFF {
        out += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
    } else {
        out.append(0x80 | 127)
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((payload.count >> shift) & 0xFF)) }
    }
    out += key
    for (i, byte) in payload.enumerated() { out.append(byte ^ key[i % 4]) }
    return out
}

/// The close frame a server writes for `code` and `reason`.
func serverClose(_ code: UInt16, _ reason: String = "") -> [UInt8] {
    let payload = [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
    return [0x88, UInt8(payload.count)] + payload
}
