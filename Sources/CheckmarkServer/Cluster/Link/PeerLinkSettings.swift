/// `peer_link`: where a cluster node takes direct links from the other nodes (``PeerLinkServer``),
/// and the secret they prove (the deployment's `api_secret`, the same on every node).
package struct PeerLinkSettings: Sendable {
    /// The address to listen on, and to tell the other nodes: one they reach this node at.
    package var host: String
    /// 0: any free port (the one bound is told).
    package var port: Int
    package var secret: String

    /// `HOST:PORT` (an IPv6 host in brackets) as its parts; nil when it is not that.
    package static func hostAndPort(_ address: String) -> (host: String, port: Int)? {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]) else { return nil }
        var host = String(address[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }

    package init(host: String, port: Int, secret: String) {
        self.host = host
        self.port = port
        self.secret = secret
    }
}
