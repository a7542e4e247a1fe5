import CheckmarkAuth
import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import Foundation
import Logging
import NIOCore
import NIOPosix

/// A real `ReceiptsServer` on 127.0.0.1 with a fresh data directory, for end-to-end tests.
struct TestServer {
    let server: ReceiptsServer
    let directory: String
    let configuration: ServerConfiguration
    var port: Int { server.port }

    /// Clients run on their own event loops, as they would in their own processes.
    static let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 2)

    static let apiKey = "test-key"
    static let apiSecret = "test-secret-0123456789"
    static let general = ChannelCID(type: "messaging", id: "general")

    /// A server on 127.0.0.1 with the test credentials; `logger` (default: errors only, discarded by
    /// the test) receives the server's log, for tests of what is logged.
    static func start(directory: String? = nil, logger: Logger? = nil, _ configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> TestServer {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.dataDirectory = directory ?? NSTemporaryDirectory() + "checkmark-e2e-" + UUID().uuidString
        configuration.apiKey = apiKey
        configuration.apiSecret = apiSecret
        configuration.shutdownTimeoutSeconds = 3
        configure(&configuration)
        var quiet = Logger(label: "checkmark-test")
        quiet.logLevel = .error
        let server = try await ReceiptsServer.start(configuration, group: MultiThreadedEventLoopGroup.singleton, logger: logger ?? quiet)
        return TestServer(server: server, directory: configuration.dataDirectory, configuration: configuration)
    }

    /// Stops the server; with `removingData`, deletes its directory too.
    func stop(removingData: Bool = true) async {
        await server.shutdown()
        if removingData { try? FileManager.default.removeItem(atPath: directory) }
    }

    static func token(_ userID: String, expiresIn seconds: Int? = nil, secret: String = apiSecret) -> String {
        var claims: [(String, JSONValue)] = [("user_id", .string(userID))]
        if let seconds { claims.append(("exp", .number(Double(WallClock.now().rawValue / 1_000_000 + Int64(seconds))))) }
        return JWT.sign(claims: .object(claims), secret: secret)
    }

    func connect(_ userID: String, details: [(String, JSONValue)] = [], token: String? = nil, apiKey: String = apiKey,
                 resume: [(ChannelCID, Int64)] = []) async throws -> ChatConnection {
        try await ChatConnection.connect(
            host: "127.0.0.1", port: port, apiKey: apiKey, userID: userID, token: token ?? Self.token(userID), userDetails: details,
            resume: resume, group: Self.clientGroup)
    }

    /// Applies commands directly (setup that has no REST route yet).
    @discardableResult
    func run(_ command: ReceiptsCommand) async throws -> ReceiptsOutcome {
        try await server.service.submit(command).get()
    }

    /// Users, then a channel of `type` with them as members.
    func setUp(users: [String], privacy: [String: PrivacySettings] = [:], cid: ChannelCID = general, members: [String]? = nil) async throws {
        for user in users { try await run(.upsertUser(User(id: user, name: user.capitalized, privacy: privacy[user] ?? .init()))) }
        if cid.type != "messaging" {
            _ = try? await run(.createChannelType(ChannelType(name: cid.type)))
        }
        try await run(.createChannel(cid: cid, createdBy: users.first, members: members ?? users))
    }

    /// One plain HTTP/1.1 request; returns the status and body.
    func http(_ method: String, _ path: String, body: String = "", headers: [String: String] = [:]) throws -> (status: Int, body: String) {
        try httpRequest(port: port, method, path, body: body, headers: headers)
    }

    static var serverToken: String { JWT.sign(claims: .object([("server", .bool(true))]), secret: apiSecret) }
}

extension ChatConnection {
    /// Every event that arrives within `window` (used to prove that nothing, or nothing more, comes).
    func drain(for window: TimeAmount = .milliseconds(300)) async -> [ChatEvent] {
        var events: [ChatEvent] = []
        while let event = await nextEvent(timeout: window) { events.append(event) }
        return events
    }
}

/// One plain HTTP/1.1 request to 127.0.0.1; returns the status and body.
func httpRequest(port: Int, _ method: String, _ path: String, body: String = "", headers: [String: String] = [:]) throws -> (status: Int, body: String) {
    let socket = try RawSocket(port: port)
    var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n"
    for (name, value) in headers { request += "\(name): \(value)\r\n" }
    socket.send(request + "\r\n" + body)
    let response = String(decoding: socket.readAll(), as: UTF8.self)
    let status = Int(response.split(separator: " ").dropFirst().first ?? "") ?? 0
    let text = response.range(of: "\r\n\r\n").map { String(response[$0.upperBound...]) } ?? ""
    return (status, text)
}
