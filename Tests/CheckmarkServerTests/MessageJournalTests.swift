import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import CheckmarkStorage
import Foundation
import Testing

extension EndToEnd {
    /// Issue 44: the journal keeps a `message.new` event's message once, in its `messages` row; the
    /// journal export and a resume after a restart give the event exactly as it was sent.
    @Suite("Journal: message events kept once, given back as sent", .serialized)
    struct MessageJournalTests {
        static let general = TestServer.general
        static let texts = ["plain", #"{"looks":"like json"} \"quoted\" ✓"#, "tab\tnew line\n}", String(repeating: "long ", count: 60)]

        static func messageNewJSON(_ lines: [TraceLine]) -> [[UInt8]] {
            lines.compactMap { line in
                guard case .event(let event) = line, event.type == "message.new" else { return nil }
                return event.json
            }
        }

        @Test func messageEventsComeBackByteForByteFromTheExportAndAfterARestart() async throws {
            let trace = NSTemporaryDirectory() + "checkmark-trace-\(UUID().uuidString).jsonl"
            defer { try? FileManager.default.removeItem(atPath: trace) }
            let server = try await TestServer.start { $0.recordPath = trace }
            // A sender whose JSON has braces, brackets and quotes in its strings.
            try await server.run(.upsertUser(User(id: "alice", name: #"Al "}{" ice"#,
                                                  custom: [("team", .object([("tags", .array([.string("]}"), .number(1)]))]))])))
            try await server.run(.upsertUser(User(id: "bob")))
            try await server.run(.createChannel(cid: Self.general, createdBy: "alice", members: ["alice", "bob"]))
            let bob = try await server.connect("bob")
            try await bob.watch(Self.general)
            let alice = try await server.connect("alice")
            for (index, text) in Self.texts.enumerated() { try await alice.sendMessage(Self.general, text: text, id: "m\(index)") }
            try await alice.sendMessage(Self.general, text: "a reply", id: "r1", parentID: "m0")
            try await alice.sendMessage(Self.general, text: "quiet", id: "s1", silent: true)
            var live: [ChatEvent] = []
            while live.count < Self.texts.count + 2, let event = await bob.nextEvent(ofType: ["message.new"]) { live.append(event) }
            #expect(live.count == Self.texts.count + 2)
            await server.stop(removingData: false)
            defer { try? FileManager.default.removeItem(atPath: server.directory) }

            let sent = Self.messageNewJSON(try TraceFile.lines(atPath: trace))
            let exported = Self.messageNewJSON(try TraceFile.journalLines(dataDirectory: server.directory))
            #expect(sent.count == Self.texts.count + 2)
            #expect(exported == sent, "the export gives each message.new as sent, byte for byte")
            let store = try SQLiteStore(directory: try DataDirectory(path: server.directory))
            let stored = try store.channelEvents(Self.general, after: 0, through: .max, limit: 100, maxBytes: .max).filter { $0.type == "message.new" }
            store.close()
            #expect(stored.count == sent.count && stored.allSatisfy { $0.message != nil }, "each refers to its stored message")
            #expect(zip(stored, sent).allSatisfy { $0.json.count + $0.message!.length == $1.count })

            let again = try await TestServer.start(directory: server.directory)
            let resumed = try await again.connect("bob")
            _ = try await resumed.watch(Self.general, lastSeq: 0)
            var replayed: [ChatEvent] = []
            while let event = await resumed.nextEvent(), event.type != "channel.resumed" {
                if event.type == "message.new" { replayed.append(event) }
            }
            #expect(replayed.map(EndToEnd.ResumeTests.comparable) == live.map(EndToEnd.ResumeTests.comparable))
            await again.stop(removingData: false)
        }
    }
}
