import CheckmarkClient
import CheckmarkCore
import CheckmarkStorage
import CheckmarkTestSupport
import CheckmarkWebSocket
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension EndToEnd {
    /// Issue: nothing acknowledged is ever lost. The real binary under confirmation load is killed with
    /// SIGKILL at random moments, or stopped with SIGTERM; every confirmation a client had an answer for
    /// must be on disk afterwards, nothing half-applied may be visible, and the journal has no gaps.
    @Suite("Durability of the real process", .serialized)
    struct DurabilityTests {
        static let general = TestServer.general
        static let writers = ["w0", "w1", "w2", "w3"]

        /// What clients were told was done.
        final class Acknowledged: Sendable {
            private let box = NIOLockedValueBox((messages: Set<String>(), reads: [String: String]()))
            func message(_ id: String) { _ = box.withLockedValue { $0.messages.insert(id) } }
            func read(_ user: String, upTo id: String) { box.withLockedValue { $0.reads[user] = id } }
            var messages: Set<String> { box.withLockedValue { $0.messages } }
            var reads: [String: String] { box.withLockedValue { $0.reads } }
        }

        static func setUp(port: Int) throws {
            let auth = ["Authorization": TestServer.serverToken]
            let users = writers.map { #""\#($0)":{"id":"\#($0)"}"# }.joined(separator: ",")
            let created = try httpRequest(port: port, "POST", "/users?api_key=\(TestServer.apiKey)", body: #"{"users":{\#(users)}}"#, headers: auth)
            #expect(created.status == 200)
            let members = writers.map { #""\#($0)""# }.joined(separator: ",")
            let channel = try httpRequest(port: port, "POST", "/channels/messaging/general/query?api_key=\(TestServer.apiKey)",
                                          body: #"{"data":{"members":[\#(members)]}}"#, headers: auth)
            #expect(channel.status == 200)
        }

        /// Each writer sends messages and marks read as fast as answers come, until its connection ends.
        static func load(port: Int, round: Int, acknowledged: Acknowledged) async throws -> [ChatConnection] {
            var connections: [ChatConnection] = []
            for user in writers {
                connections.append(try await ChatConnection.connect(
                    host: "127.0.0.1", port: port, apiKey: TestServer.apiKey, userID: user, token: TestServer.token(user),
                    group: TestServer.clientGroup))
            }
            for (index, connection) in connections.enumerated() {
                let user = writers[index]
                Task {
                    var n = 0
                    while true {
                        let id = "\(user)-r\(round)-\(n)"
                        do {
                            try await connection.sendMessage(general, text: "load \(n)", id: id)
                            acknowledged.message(id)
                            if n % 3 == 2 {
                                try await connection.markRead(general, messageID: id)
                                acknowledged.read(user, upTo: id)
                            }
                        } catch {
                            return
                        }
                        n += 1
                    }
                }
            }
            return connections
        }

        /// Opens the data directory the way the server does and checks it against what was acknowledged.
        static func verify(directory: String, acknowledged: Acknowledged) throws {
            let store = try SQLiteStore(directory: try DataDirectory(path: directory))
            defer { store.close() }
            let stored = try store.load()
            let engine = ReceiptsEngine(restoring: stored.snapshot)
            let channel = try #require(engine.channels[general])
            let present = Set(channel.messages.heldMessages.map(\.id))
            let missing = acknowledged.messages.subtracting(present)
            #expect(missing.isEmpty, "acknowledged messages lost: \(missing.sorted().prefix(5))")
            for (user, id) in acknowledged.reads {
                let read = try #require(channel.members[user]?.read)
                let index = try #require(channel.messages.position(of: id))
                #expect(read.readPosition > index, "\(user)'s acknowledged read up to \(id) is on disk")
            }
            // The journal: consecutive sequence numbers, and exactly one entry per stored message
            // (a message without its entry, or an entry without its message, would be half-applied).
            let entries = try store.journal(after: 0, limit: 10_000_000)
            #expect(entries.map(\.seq) == Array((entries.first?.seq ?? 1)..<((entries.first?.seq ?? 1) + Int64(entries.count))))
            #expect(entries.last?.seq == stored.lastSeq)
            // Each stream's entries are numbered without gaps, and the load says where each stands.
            for stream in Set(entries.map(\.stream)) {
                let numbers = entries.filter { $0.stream == stream }.map(\.streamSeq)
                #expect(numbers == Array(numbers[0]..<(numbers[0] + Int64(numbers.count))), "\(stream)")
                #expect(stored.streamSeqs[stream.rawValue] == numbers.last, "\(stream)")
            }
            #expect(entries.contains { $0.stream == JournalStream(ShardMap.shard(of: general)) }, "the channel's commands are its shard's")
            var journaled: [String] = []
            for entry in entries {
                if case .sendMessage(_, _, let draft) = entry.command, let id = draft.id { journaled.append(id) }
            }
            #expect(journaled == channel.messages.heldMessages.map(\.id), "the journal and the messages agree, in order")
            for user in writers {
                let member = try #require(channel.members[user])
                #expect(member.read.unreadMessages == channel.countUnread(for: user, from: member.read.readPosition))
            }
        }

        @Test func acknowledgedConfirmationsSurviveSIGKILLAtRandomMoments() async throws {
            let directory = NSTemporaryDirectory() + "checkmark-crash-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let rounds = Int(ProcessInfo.processInfo.environment["CHECKMARK_CRASH_ROUNDS"] ?? "") ?? 12
            let acknowledged = Acknowledged()
            var generator = SystemRandomNumberGenerator()
            for round in 0..<rounds {
                let server = try ServerProcess(dataDirectory: directory)
                if round == 0 { try Self.setUp(port: server.port) }
                let connections = try await Self.load(port: server.port, round: round, acknowledged: acknowledged)
                try await Task.sleep(for: .milliseconds(Int.random(in: 100...700, using: &generator)))
                server.signal(SIGKILL)
                #expect(server.waitForExit() == -SIGKILL)
                for connection in connections { _ = await connection.nextEvent(ofType: ["connection.closed"], timeout: .seconds(5)) }
                try Self.verify(directory: directory, acknowledged: acknowledged)
            }
            #expect(acknowledged.messages.count > rounds * 10, "the load really ran (\(acknowledged.messages.count) messages acknowledged)")
        }

        @Test func sigtermUnderLoadClosesEveryClientWith1001AndExitsZero() async throws {
            let directory = NSTemporaryDirectory() + "checkmark-term-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let acknowledged = Acknowledged()
            let server = try ServerProcess(dataDirectory: directory)
            try Self.setUp(port: server.port)
            let connections = try await Self.load(port: server.port, round: 0, acknowledged: acknowledged)
            var watchers: [ChatConnection] = []
            for user in Self.writers {
                let watcher = try await ChatConnection.connect(
                    host: "127.0.0.1", port: server.port, apiKey: TestServer.apiKey, userID: user, token: TestServer.token(user),
                    group: TestServer.clientGroup)
                try await watcher.watch(Self.general)
                watchers.append(watcher)
            }
            try await Task.sleep(for: .milliseconds(500))
            server.signal(SIGTERM)
            for connection in connections + watchers {
                let end = await connection.nextEvent(ofType: ["connection.closed"], timeout: .seconds(15))
                guard case .closed(let code) = end else {
                    Issue.record("no close within 15 s: \(String(describing: end))")
                    continue
                }
                #expect(code == .goingAway)
            }
            #expect(server.waitForExit() == 0, "exit code 0")
            #expect(acknowledged.messages.count > 10)
            try Self.verify(directory: directory, acknowledged: acknowledged)
        }
    }
}
