/// `peer_link`: where a cluster node takes direct links from the other nodes (``PeerLinkServer``),
/// and the secret they prove (the deployment's `api_secret`, the same on every node).
package struct PeerLinkSettings: Sendable {
    /// The address to listen on, and to tell the other nodes: one they reach this node at.
    package var host: String
    /// 0: any free port (the one bound is told).
    package var port: Int
    package var secret: String

    package init(host: String, port: Int, secret: String) {
        self.host = host
        self.port = port
        self.secret = secret
    }
}
