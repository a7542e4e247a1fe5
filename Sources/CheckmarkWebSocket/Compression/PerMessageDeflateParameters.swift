/// The agreed permessage-deflate parameters of one connection (RFC 7692 section 7.1).
public struct PerMessageDeflateParameters: Sendable, Hashable {
    /// The server drops its compression window after every message.
    public var serverNoContextTakeover: Bool
    /// The client drops its compression window after every message.
    public var clientNoContextTakeover: Bool
    /// Largest window the server compresses with, 8 to 15.
    public var serverMaxWindowBits: Int
    /// Largest window the client compresses with, 8 to 15.
    public var clientMaxWindowBits: Int

    public init(
        serverNoContextTakeover: Bool = false, clientNoContextTakeover: Bool = false,
        serverMaxWindowBits: Int = 15, clientMaxWindowBits: Int = 15
    ) {
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverMaxWindowBits = serverMaxWindowBits
        self.clientMaxWindowBits = clientMaxWindowBits
    }

    /// The extension name.
    public static let extensionName = "permessage-deflate"

    /// Whether this side's compression window is dropped after every message.
    public func sendsWithoutContextTakeover(as role: WebSocketRole) -> Bool {
        role == .server ? serverNoContextTakeover : clientNoContextTakeover
    }

    /// Whether the peer drops its window after every message (so ours can be reset too).
    public func receivesWithoutContextTakeover(as role: WebSocketRole) -> Bool {
        role == .server ? clientNoContextTakeover : serverNoContextTakeover
    }

    /// The window this side compresses with.
    public func sendWindowBits(as role: WebSocketRole) -> Int {
        role == .server ? serverMaxWindowBits : clientMaxWindowBits
    }

    /// The response element announcing these parameters.
    public var responseHeader: ExtensionHeader {
        var header = ExtensionHeader(name: Self.extensionName)
        if serverNoContextTakeover { header.parameters.append(("server_no_context_takeover", nil)) }
        if clientNoContextTakeover { header.parameters.append(("client_no_context_takeover", nil)) }
        if serverMaxWindowBits < 15 { header.parameters.append(("server_max_window_bits", String(serverMaxWindowBits))) }
        if clientMaxWindowBits < 15 { header.parameters.append(("client_max_window_bits", String(clientMaxWindowBits))) }
        return header
    }

    /// Parses a window-bits value: 8 to 15, digits only, no leading zero (section 7.1.2).
    static func windowBits(_ value: String?) -> Int? {
        guard let value, !value.hasPrefix("0"), value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let bits = Int(value), (8...15).contains(bits)
        else { return nil }
        return bits
    }
}
