import CheckmarkAuth
import CheckmarkClient
import CheckmarkCore
import Foundation

/// The server under load: one at a URL, or a local one the harness starts (and samples from /proc).
package final class BenchTarget: Sendable {
    package let host: String
    package let port: Int
    package let apiKey: String
    package let apiSecret: String
    package let local: LocalServer?
    /// The server's CPU and memory: from /proc when it runs here (local, or `--server-pid`), else
    /// from its `/metrics` (`process_cpu_seconds_total`, `process_resident_memory_bytes`).
    package let sampler: ProcessSampler
    package let http: BenchHTTPClient
    /// Where WebSocket clients connect: this server, then the other nodes of its cluster; each user
    /// always goes to the same one.
    package let nodes: [(host: String, port: Int)]

    package init(host: String, port: Int, apiKey: String, apiSecret: String, local: LocalServer?, serverPID: Int32?,
                otherNodes: [(host: String, port: Int)] = []) {
        self.host = host
        self.port = port
        nodes = [(host, port)] + otherNodes
        self.apiKey = apiKey
        self.apiSecret = apiSecret
        self.local = local
        http = BenchHTTPClient(host: host, port: port, apiKey: apiKey, apiSecret: apiSecret)
        sampler = (local?.pid ?? serverPID).map(ProcessSampler.init(pid:)) ?? ProcessSampler(metrics: http)
    }

    package var description: String {
        local != nil ? "local checkmark serve on 127.0.0.1:\(port) (pid \(local!.pid))"
            : nodes.map { "ws://\($0.host):\($0.port)" }.joined(separator: " + ")
    }

    /// The `/connect` URL for one user, with a fresh user token.
    package func connectURL(user: String) -> WebSocketURL {
        let token = JWT.sign(claims: .object([("user_id", .string(user))]), secret: apiSecret)
        let json = #"{"user_id":"\#(user)"}"#
        let query = "json=\(Self.encode(json))&api_key=\(Self.encode(apiKey))&authorization=\(token)&stream-auth-type=jwt"
        let node = nodes[Self.stableHash(user) % nodes.count]
        return WebSocketURL(host: node.host, port: node.port, target: "/connect?\(query)")
    }

    /// FNV-1a of the user id: the same node for the same user in every run.
    static func stableHash(_ text: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int(hash % UInt64(Int.max))
    }

    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }

    package func stop() { local?.stop() }
}
