/// How this endpoint offers or accepts permessage-deflate (RFC 7692).
public struct PerMessageDeflateConfiguration: Sendable, Hashable {
    /// Offer (client) or accept (server) the extension at all.
    public var isEnabled: Bool
    /// Largest window this side compresses with (8 to 15). Smaller saves memory per connection.
    public var maxWindowBits: Int
    /// Always drop this side's window after each message, even if the peer did not ask. On a server
    /// this is what lets one compressed frame be shared by every recipient of a fan-out.
    public var noContextTakeover: Bool
    /// Ask the peer to drop its window after each message (lets this side reset its inflater).
    public var requestPeerNoContextTakeover: Bool
    /// Messages shorter than this many bytes are sent uncompressed.
    public var compressionThreshold: Int
    /// zlib compression level, 1 (fastest) to 9 (smallest).
    public var level: Int

    public init(
        isEnabled: Bool = true, maxWindowBits: Int = 15, noContextTakeover: Bool = false,
        requestPeerNoContextTakeover: Bool = false, compressionThreshold: Int = 64, level: Int = 6
    ) {
        self.isEnabled = isEnabled
        self.maxWindowBits = maxWindowBits
        self.noContextTakeover = noContextTakeover
        self.requestPeerNoContextTakeover = requestPeerNoContextTakeover
        self.compressionThreshold = compressionThreshold
        self.level = level
    }

    public static let disabled = PerMessageDeflateConfiguration(isEnabled: false)

    /// Server side: accepts the first acceptable offer, in the client's order of preference.
    /// Offers with unknown, repeated or malformed parameters are declined (section 7.1);
    /// returns nil when none is acceptable, which means "no compression", not a failure.
    public func accept(offers: [ExtensionHeader]) -> PerMessageDeflateParameters? {
        guard isEnabled else { return nil }
        for offer in offers {
            guard let element = PerMessageDeflateElement(offer) else { continue }
            // Without server_max_window_bits in the offer the response may not carry it (section
            // 7.1.2.1); the connection still compresses with no more than `maxWindowBits`, which is
            // always safe. client_max_window_bits is a hint: our inflater reads any window.
            return PerMessageDeflateParameters(
                serverNoContextTakeover: noContextTakeover || element.serverNoContextTakeover,
                clientNoContextTakeover: requestPeerNoContextTakeover || element.clientNoContextTakeover,
                serverMaxWindowBits: element.serverMaxWindowBits.map { min($0, maxWindowBits) } ?? 15)
        }
        return nil
    }

    /// Client side: the offer to send.
    public var offer: ExtensionHeader {
        var header = ExtensionHeader(name: PerMessageDeflateParameters.extensionName)
        if noContextTakeover { header.parameters.append(("client_no_context_takeover", nil)) }
        if requestPeerNoContextTakeover { header.parameters.append(("server_no_context_takeover", nil)) }
        header.parameters.append(("client_max_window_bits", maxWindowBits < 15 ? String(maxWindowBits) : nil))
        return header
    }

    /// Client side: checks the server's answer to ``offer``. Returns nil when it is not acceptable
    /// (unknown or repeated parameter, a value out of range or above what was offered), in which case
    /// the client must fail the connection (section 7.1).
    public func validate(response: ExtensionHeader) -> PerMessageDeflateParameters? {
        guard let element = PerMessageDeflateElement(response) else { return nil }
        // A response names client_max_window_bits only with a value, and no larger than offered.
        if element.hasClientMaxWindowBits {
            guard let bits = element.clientMaxWindowBits, bits <= maxWindowBits else { return nil }
        }
        return PerMessageDeflateParameters(
            serverNoContextTakeover: element.serverNoContextTakeover,
            clientNoContextTakeover: noContextTakeover || element.clientNoContextTakeover,
            serverMaxWindowBits: element.serverMaxWindowBits ?? 15,
            clientMaxWindowBits: element.clientMaxWindowBits ?? maxWindowBits)
    }
}
