/// One permessage-deflate element of an offer or a response, with each parameter well-formed and at
/// most once (RFC 7692 section 7.1): the syntax both sides check before applying their own rules.
struct PerMessageDeflateElement: Sendable, Hashable {
    var serverNoContextTakeover = false
    var clientNoContextTakeover = false
    /// Given with a value (required when present).
    var serverMaxWindowBits: Int?
    /// Present at all; an offer may give it without a value.
    var hasClientMaxWindowBits = false
    var clientMaxWindowBits: Int?

    /// Nil for another extension, an unknown or repeated parameter, a value where none belongs, or a
    /// window size that is not 8 to 15 written without a leading zero.
    init?(_ header: ExtensionHeader) {
        guard header.name == PerMessageDeflateParameters.extensionName else { return nil }
        var seen = Set<String>()
        for parameter in header.parameters {
            guard seen.insert(parameter.name).inserted else { return nil }
            switch parameter.name {
            case "server_no_context_takeover":
                guard parameter.value == nil else { return nil }
                serverNoContextTakeover = true
            case "client_no_context_takeover":
                guard parameter.value == nil else { return nil }
                clientNoContextTakeover = true
            case "server_max_window_bits":
                guard let bits = PerMessageDeflateParameters.windowBits(parameter.value) else { return nil }
                serverMaxWindowBits = bits
            case "client_max_window_bits":
                hasClientMaxWindowBits = true
                if let value = parameter.value {
                    guard let bits = PerMessageDeflateParameters.windowBits(value) else { return nil }
                    clientMaxWindowBits = bits
                }
            default:
                return nil
            }
        }
    }
}
