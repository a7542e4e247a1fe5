import CheckmarkAuth

/// How a cluster node proves to another that it belongs to the same deployment before sending it
/// peer messages over a direct link (``PeerLinkServer``): the listening node opens with a challenge
/// of fresh random bytes, the connecting node answers with its node id and an HMAC-SHA256 of both,
/// keyed by the deployment's `api_secret`, and the listener accepts the link or closes it. The secret
/// never crosses the link, and an answer is good for its own challenge only. Deterministic: the
/// caller gives the random bytes.
struct PeerLinkHandshake: Sendable {
    /// The protocol's name and version, the first word of every challenge.
    static let protocolName = "checkmark-peer-link/1"
    /// What the listener sends once it accepted an answer.
    static let accepted = "ok"
    /// The challenge's random bytes.
    static let nonceBytes = 32
    /// The longest node id an answer may carry.
    static let maxNodeIDBytes = 64

    /// Why a listener closed a link during its handshake.
    enum Refusal: Error, Equatable, CustomStringConvertible {
        /// Not `<node id> <proof>`, or a node id that is empty, too long or not made of `[a-z0-9]`.
        case malformed
        /// The proof is not the HMAC of this challenge and node id under the deployment's secret.
        case wrongProof(node: String)

        var description: String {
            switch self {
            case .malformed: "the answer to the link's challenge is malformed"
            case .wrongProof(let node): "node \(node) answered the link's challenge with a wrong proof (another api_secret?)"
            }
        }
    }

    private let secret: [UInt8]

    init(secret: String) {
        self.secret = Array(secret.utf8)
    }

    /// The listener's first frame for the random bytes `nonce`.
    static func challenge(nonce: [UInt8]) -> String {
        protocolName + " " + hex(nonce)
    }

    /// The connecting node `node`'s answer to `challenge`; nil when the challenge is not this
    /// protocol's (another program, or another version, listens there).
    func answer(to challenge: String, node: String) -> String? {
        let parts = challenge.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == Self.protocolName, parts[1].utf8.count == Self.nonceBytes * 2 else { return nil }
        return node + " " + Self.hex(proof(challenge: String(parts[1]), node: node))
    }

    /// The node whose `answer` to the challenge of `nonce` proves the deployment's secret.
    func verify(_ answer: String, nonce: [UInt8]) -> Result<String, Refusal> {
        let parts = answer.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, Self.isNodeID(parts[0]), let given = Self.bytes(hex: parts[1]) else { return .failure(.malformed) }
        let node = String(parts[0])
        let expected = proof(challenge: Self.hex(nonce), node: node)
        return JWT.constantTimeEqual(given, expected) ? .success(node) : .failure(.wrongProof(node: node))
    }

    private func proof(challenge: String, node: String) -> [UInt8] {
        JWT.hmacSHA256(key: secret, message: Array("\(Self.protocolName)\n\(challenge)\n\(node)".utf8))
    }

    private static func isNodeID(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.count <= maxNodeIDBytes
            && text.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    private static let digits = Array("0123456789abcdef".utf8)

    static func hex(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func bytes(hex text: Substring) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count == 64 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(32)
        var index = 0
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}
