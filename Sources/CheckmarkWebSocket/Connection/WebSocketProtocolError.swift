/// Everything a peer can do wrong on an open WebSocket connection. Each case maps to exactly one close
/// code through ``WebSocketCloseCode/init(error:)``.
public enum WebSocketProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Opcode 3-7 or 11-15 (section 5.2).
    case reservedOpcode(UInt8)
    /// RSV1-3 set without a negotiated extension that defines them (section 5.2, RFC 7692 section 6).
    case reservedBitsSet
    /// A control frame with FIN clear (section 5.5).
    case fragmentedControlFrame
    /// A control frame payload over 125 bytes (section 5.5).
    case controlFrameTooLarge
    /// A server received an unmasked frame (section 5.1).
    case maskMissing
    /// A client received a masked frame (section 5.1).
    case maskUnexpected
    /// A 64-bit payload length with its most significant bit set (section 5.2).
    case invalidLength
    /// A frame over the configured maximum frame size.
    case frameTooLarge(limit: Int)
    /// A message (after decompression) over the configured maximum message size.
    case messageTooLarge(limit: Int)
    /// More fragments in one message than the configured maximum.
    case tooManyFragments(limit: Int)
    /// A continuation frame with no message in progress (section 5.4).
    case unexpectedContinuation
    /// A new text or binary frame while a fragmented message is still in progress (section 5.4).
    case expectedContinuation
    /// A text message or close reason that is not valid UTF-8 (section 8.1).
    case invalidUTF8
    /// A close frame whose payload is exactly one byte (section 5.5.1).
    case invalidClosePayloadLength
    /// A close frame carrying a code that may not appear on the wire (section 7.4).
    case invalidCloseCode(UInt16)
    /// Compressed data that zlib cannot inflate (RFC 7692 section 7.2.2).
    case invalidCompressedData

    public var description: String {
        switch self {
        case .reservedOpcode(let op): "reserved opcode \(op)"
        case .reservedBitsSet: "reserved bits set without a negotiated extension"
        case .fragmentedControlFrame: "fragmented control frame"
        case .controlFrameTooLarge: "control frame payload over 125 bytes"
        case .maskMissing: "client frame is not masked"
        case .maskUnexpected: "server frame is masked"
        case .invalidLength: "payload length has its most significant bit set"
        case .frameTooLarge(let limit): "frame larger than \(limit) bytes"
        case .messageTooLarge(let limit): "message larger than \(limit) bytes"
        case .tooManyFragments(let limit): "message in more than \(limit) fragments"
        case .unexpectedContinuation: "continuation frame without a message in progress"
        case .expectedContinuation: "new message before the previous one finished"
        case .invalidUTF8: "invalid UTF-8"
        case .invalidClosePayloadLength: "close frame payload of one byte"
        case .invalidCloseCode(let code): "close code \(code) is not valid on the wire"
        case .invalidCompressedData: "compressed data could not be inflated"
        }
    }
}
