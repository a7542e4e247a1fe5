import CheckmarkAuth
import CheckmarkClient
import CheckmarkCore
import CheckmarkWebSocket
import CheckmarkWire
import Foundation
import NIOCore

/// Records the live trace of a running server (`checkmark replay record`): connects to
/// `/admin/trace` with a server token and appends every line to a file until the time is up or the
/// server closes the stream.
package enum LiveTraceRecorder {
    package struct Result: Sendable {
        package var lines = 0
        /// When the server started sending (its `start` line).
        package var startedAt: String?
        /// How the stream ended: nil when the recorder stopped it.
        package var closeCode: WebSocketCloseCode?
    }

    /// - Parameters:
    ///   - ready: called once the server streams (everything applied from then on is recorded).
    /// - Throws: ``WebSocketClientError`` when the server refuses (401 for a wrong key or token), or
    ///   a file error.
    package static func record(
        host: String, port: Int, apiKey: String, apiSecret: String, to path: String, seconds: Double,
        ready: @Sendable () -> Void = {}
    ) async throws -> Result {
        let token = JWT.sign(claims: .object([("server", .bool(true))]), secret: apiSecret)
        let target = "/admin/trace?api_key=\(ChatConnection.percentEncode(apiKey))&authorization=\(ChatConnection.percentEncode(token))"
        let url = WebSocketURL(host: host, port: port, target: target)
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        defer { try? file.close() }
        let connection = try await WebSocketClient.connect(to: url)
        var result = Result()
        let deadline = Date().addingTimeInterval(seconds)
        let stopper = Task {
            try? await Task.sleep(for: .seconds(seconds))
            connection.close()
        }
        defer { stopper.cancel() }
        var pending = Data()
        for await event in connection.events {
            switch event {
            case .text(let line):
                // The server's first message says from when it records; every other one is a trace line.
                if result.startedAt == nil, let start = try? JSONParser.parse(line, limits: .stored), start["kind"]?.stringValue == "start" {
                    result.startedAt = start["at"]?.stringValue ?? ""
                    ready()
                    continue
                }
                pending.append(contentsOf: Array(line.utf8))
                pending.append(UInt8(ascii: "\n"))
                result.lines += 1
                if pending.count > 1 << 16 {
                    try file.write(contentsOf: pending)
                    pending.removeAll(keepingCapacity: true)
                }
            case .binary:
                continue
            case .closed(let code):
                result.closeCode = Date() < deadline ? code : nil
            }
        }
        try file.write(contentsOf: pending)
        return result
    }
}
