import CheckmarkBench
import CheckmarkClient
import CheckmarkServer
import Foundation
import Logging
import NIOPosix
import Testing

/// `checkmark demo`'s session against a real server on 127.0.0.1: the checks Ana's client shows
/// change as the receipts contract says (sent, delivered, read), and a reader with read receipts off
/// leaves the message at delivered.
@Suite("The first session (checkmark demo)")
struct FirstSessionTests {
    static let secret = "first-session-test-secret-0123"

    static func startServer() async throws -> (ReceiptsServer, ServerConfiguration) {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.dataDirectory = NSTemporaryDirectory() + "checkmark-first-session-" + UUID().uuidString
        configuration.apiSecret = secret
        var logger = Logger(label: "first-session-test")
        logger.logLevel = .error
        return (try await ReceiptsServer.start(configuration, group: MultiThreadedEventLoopGroup.singleton, logger: logger), configuration)
    }

    @Test func checksGoFromSentToDeliveredToReadAndStayGrayForAPrivateReader() async throws {
        let (server, configuration) = try await Self.startServer()
        defer { Task { await server.shutdown(); try? FileManager.default.removeItem(atPath: configuration.dataDirectory) } }
        let session = FirstSession(host: "127.0.0.1", port: server.port, apiKey: configuration.apiKey, apiSecret: Self.secret, channelID: "first")
        let steps = try await session.run { _ in }
        #expect(steps.map(\.state) == [.sent, .delivered, .read, .sent, .delivered, .delivered])
        #expect(steps.map(\.readWithheld) == [false, false, false, false, false, true])
        #expect(steps.filter { $0.state != .sent }.allSatisfy { $0.by == ["ben"] })
        #expect(steps.prefix(3).allSatisfy { !$0.at.isEmpty }, "each change carries the server's time")
    }

    @Test func aSecondRunOnTheSameServerStartsFromReadReceiptsOn() async throws {
        let (server, configuration) = try await Self.startServer()
        defer { Task { await server.shutdown(); try? FileManager.default.removeItem(atPath: configuration.dataDirectory) } }
        for channel in ["one", "two"] {
            let session = FirstSession(host: "127.0.0.1", port: server.port, apiKey: configuration.apiKey, apiSecret: Self.secret, channelID: channel)
            let steps = try await session.run { _ in }
            #expect(steps.map(\.state) == [.sent, .delivered, .read, .sent, .delivered, .delivered], "channel \(channel)")
        }
    }
}
