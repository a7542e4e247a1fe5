/// A close status code (RFC 6455 section 7.4).
///
/// The one place where protocol errors become wire codes: ``init(error:)``.
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    public static let invalidPayloadData = WebSocketCloseCode(rawValue: 1007)
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    public static let mandatoryExtension = WebSocketCloseCode(rawValue: 1010)
    public static let internalError = WebSocketCloseCode(rawValue: 1011)

    /// Whether this code may appear in a close frame on the wire: 1000-1003, 1007-1011 and 3000-4999.
    /// 1004-1006 and 1015 are reserved for local use, 0-999 are unused, 1012-2999 are not assigned to
    /// endpoints here, and everything from 5000 up is out of range.
    public var isValidOnWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1011, 3000...4999: true
        default: false
        }
    }

    /// The close code that answers a protocol error: 1002 for framing and handshake-state violations,
    /// 1007 for invalid UTF-8 or undecodable compressed data, 1009 for anything over a size limit.
    public init(error: WebSocketProtocolError) {
        switch error {
        case .invalidUTF8, .invalidCompressedData:
            self = .invalidPayloadData
        case .frameTooLarge, .messageTooLarge, .tooManyFragments:
            self = .messageTooBig
        case .reservedOpcode, .reservedBitsSet, .fragmentedControlFrame, .controlFrameTooLarge,
            .maskMissing, .maskUnexpected, .invalidLength, .unexpectedContinuation,
            .expectedContinuation, .invalidClosePayloadLength, .invalidCloseCode:
            self = .protocolError
        }
    }

    public var description: String { String(rawValue) }
}
