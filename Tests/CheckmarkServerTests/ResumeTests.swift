import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import CheckmarkStorage
import NIOConcurrencyHelpers
import NIOCore
import Testing

extension EndToEnd {
    /// Resuming a channel from the last `channel_seq` seen (docs/protocol.md, Resuming a channel): the
    /// missed events in order, once, then `channel.resumed`, then live events with no gap and no
    /// duplicate at the seam; `channel.resume_failed` when the journal cannot serve it.
    @Suite("Resume: missed events, once, in order", .serialized)
    struct ResumeTests {
        static let general = TestServer.general
        static let countFields: Set<String> = ["unread_count", "total_unread_count", "unread_channels"]

        /// An event of the watched stream as compared across connections: per-recipient counts left out.
        static func comparable(_ event: ChatEvent) -> JSONValue? {
            guard case .object(let fields)? = event.json else { return nil }
            return .object(fields.filter { !countFields.contains($0.0) })
        }

        static func describe(_ events: [ChatEvent]) -> String {
            events.prefix(5).map { "\(channelSeq($0) ?? -1) \($0.type) \($0.json?["user"]?["id"]?.stringValue ?? "")" }.joined(separator: ", ")
        }

        static func channelSeq(_ event: ChatEvent) -> Int64? {
            event.json?["channel_seq"]?.intValue.map(Int64.init)
        }

        @Test func resumingWatchReplaysMissedEventsThenGoesLive() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob"])
            let alice = try await server.connect("alice")
            try await alice.watch(Self.general)
            var bob = try await server.connect("bob")
            try await bob.watch(Self.general)
            try await alice.sendMessage(Self.general, text: "one", id: "m1")
            let first = await bob.nextEvent(ofType: ["message.new"])
            let seen = try #require(first.flatMap(Self.channelSeq))
            bob.close()

            try await alice.sendMessage(Self.general, text: "two", id: "m2")
            try await alice.sendMessage(Self.general, text: "three", id: "m3")
            try await server.run(.markRead(cid: Self.general, userID: "bob", messageID: "m2"))  // bob's other device
            bob = try await server.connect("bob")
            _ = try await bob.watch(Self.general, lastSeq: seen)
            var replayed: [ChatEvent] = []
            var marker: ChatEvent?
            while let event = await bob.nextEvent() {
                if event.type == "channel.resumed" { marker = event; break }
                replayed.append(event)
            }
            #expect(replayed.map(\.type) == ["message.new", "message.new", "message.read", "notification.mark_read"])
            // Each message also journaled a notification.message_new, which a watcher never gets.
            #expect(replayed.compactMap(Self.channelSeq) == [seen + 2, seen + 4, seen + 6, seen + 7])
            #expect(marker.flatMap(Self.channelSeq) == seen + 7)
            #expect(replayed[1].json?["message"]?["id"]?.stringValue == "m3")
            #expect(replayed[1].json?["unread_count"]?.intValue == 1, "replayed events carry the counts as of the resume")
            try await alice.sendMessage(Self.general, text: "four", id: "m4")
            let live = await bob.nextEvent(ofType: ["message.new"])
            #expect(live.flatMap(Self.channelSeq) == seen + 8, "the first live event follows the last replayed one")
            #expect(await bob.drain().isEmpty)
        }

        /// The journal keeps a channel object once for the reads that carry the same bytes
        /// (`JournaledChannel`); a resume replays each `notification.mark_read` as it was sent.
        @Test func readsSharingAChannelObjectAreReplayedAsSent() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob"])
            let alice = try await server.connect("alice")
            for id in ["m1", "m2", "m3"] { try await alice.sendMessage(Self.general, text: id, id: id) }
            let bob = try await server.connect("bob")
            try await bob.watch(Self.general)
            var live: [JSONValue] = []
            for id in ["m1", "m2", "m3"] {
                try await bob.markRead(Self.general, messageID: id)
                let event = try #require(await bob.nextEvent(ofType: ["notification.mark_read"]))
                live.append(try #require(Self.comparable(event)))
            }
            #expect(live.count == 3 && live.allSatisfy { $0["channel"] != nil && $0["channel"] == live[0]["channel"] },
                    "the three reads carry the same channel object")
            let again = try await server.connect("bob")
            try await again.watch(Self.general, lastSeq: 0)
            var replayed: [JSONValue] = []
            while let event = await again.nextEvent(), event.type != "channel.resumed" {
                if event.type == "notification.mark_read", let json = Self.comparable(event) { replayed.append(json) }
            }
            #expect(replayed == live)
        }

        @Test func connectResumesChannelsNamedInTheConnectRequest() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob"])
            let alice = try await server.connect("alice")
            try await alice.sendMessage(Self.general, text: "one", id: "m1")
            try await alice.sendMessage(Self.general, text: "two", id: "m2")
            let bob = try await server.connect("bob", resume: [(Self.general, 1)])
            let reply = await bob.nextEvent(ofType: ["reply"])
            #expect(reply?.json?["request_id"]?.stringValue == "resume:messaging:general")
            let missed = await bob.nextEvent(ofType: ["message.new"])
            #expect(missed?.json?["message"]?["id"]?.stringValue == "m2")
            let marker = await bob.nextEvent(ofType: ["channel.resumed"])
            // Alice does not watch: each message also sent her other devices a notification.message_new.
            #expect(marker?.json?["last_seq"]?.intValue == 1 && marker?.json?["channel_seq"]?.intValue == 4)
            #expect(marker?.json?["replayed"]?.intValue == 1)
        }

        @Test func privateReceiptsAreNotReplayedToOthers() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob", "carol"], privacy: ["carol": PrivacySettings(readReceipts: false)])
            let alice = try await server.connect("alice")
            try await alice.sendMessage(Self.general, text: "one", id: "m1")
            try await server.run(.markRead(cid: Self.general, userID: "carol", messageID: nil))
            try await server.run(.markRead(cid: Self.general, userID: "bob", messageID: nil))

            let bob = try await server.connect("bob")
            try await bob.watch(Self.general, lastSeq: 0)
            var toBob: [ChatEvent] = []
            while let event = await bob.nextEvent(), event.type != "channel.resumed" { toBob.append(event) }
            #expect(!toBob.contains { $0.type == "message.read" && $0.json?["user"]?["id"]?.stringValue == "carol" },
                    "carol's read receipts are off: her message.read never reaches bob, live or replayed")
            #expect(toBob.contains { $0.type == "message.read" && $0.json?["user"]?["id"]?.stringValue == "bob" })

            let carol = try await server.connect("carol")
            try await carol.watch(Self.general, lastSeq: 0)
            var toCarol: [ChatEvent] = []
            while let event = await carol.nextEvent(), event.type != "channel.resumed" { toCarol.append(event) }
            #expect(toCarol.contains { $0.type == "message.read" && $0.json?["user"]?["id"]?.stringValue == "carol" },
                    "her own watching connections do get it (rule 6)")
        }

        @Test func resumeFailsExplicitlyWhenTheJournalNoLongerReachesBack() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob"])
            let alice = try await server.connect("alice")
            try await alice.watch(Self.general)
            for index in 1...6 { try await alice.sendMessage(Self.general, text: "\(index)", id: "m\(index)") }
            _ = try await server.server.service.prune(RetentionPolicy(maxEventsPerChannel: 3)).get()

            let bob = try await server.connect("bob")
            try await bob.watch(Self.general, lastSeq: 1)
            let failed = await bob.nextEvent(ofType: ["channel.resume_failed", "channel.resumed", "message.new"])
            #expect(failed?.type == "channel.resume_failed")
            // Six messages made twelve channel events (message.new, notification.message_new); 10-12 are kept.
            #expect(failed?.json?["reason"]?.stringValue?.contains("from 10 on") == true)
            try await bob.watch(Self.general, lastSeq: 99)
            let ahead = await bob.nextEvent(ofType: ["channel.resume_failed", "channel.resumed"])
            #expect(ahead?.json?["reason"]?.stringValue?.contains("no event 99") == true)
            // Within what the journal keeps, resume works.
            try await bob.watch(Self.general, lastSeq: 10)
            let missed = await bob.nextEvent(ofType: ["message.new"])
            #expect(missed?.json?["message"]?["id"]?.stringValue == "m6")
        }

        @Test func badLastSeqIsAnInvalidArgument() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice"])
            let alice = try await server.connect("alice")
            for bad in ["-1", "1.5", "\"3\""] {
                await #expect {
                    try await alice.request("watch", [("cid", .string("messaging:general")), ("last_seq", try JSONParser.parse(bad))])
                } throws: { ($0 as? ChatClientError)?.code == "invalid_argument" }
            }
            await #expect {
                _ = try await server.connect("alice", resume: [(Self.general, -4)])
            } throws: { error in
                guard case .refused(let code, _, let close)? = error as? ChatClientError else { return false }
                return code == "invalid_argument" && close == GatewayCloseCode.authenticationFailed
            }
        }

        /// Clients cut off at random moments while a burst of messages and reads goes on reconnect with
        /// the last sequence they saw, and end with exactly what a connection of the same user that
        /// stayed connected received.
        @Test func clientsCutOffAtRandomUnderLoadEndWithExactlyTheStayingClientsEvents() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let readers = ["r1", "r2", "r3", "r4"]
            try await server.setUp(users: ["writer"] + readers)
            var steady: [String: ChatConnection] = [:]
            for reader in readers {
                let connection = try await server.connect(reader)
                try await connection.watch(Self.general)
                steady[reader] = connection
            }
            let writer = try await server.connect("writer")
            try await writer.watch(Self.general)
            let messages = 200

            let loadDone = NIOLockedValueBox(false)
            let load = Task {
                defer { loadDone.withLockedValue { $0 = true } }
                for index in 1...messages {
                    try await writer.sendMessage(Self.general, text: "burst \(index)", id: "b\(index)")
                    if index % 7 == 0 {
                        let reader = readers[index % readers.count]
                        try await server.run(.markRead(cid: Self.general, userID: reader, messageID: "b\(index - 2)"))
                    }
                }
            }
            let flaky = try await withThrowingTaskGroup(of: (String, [ChatEvent], Int).self) { group in
                for reader in readers {
                    group.addTask {
                        var received: [ChatEvent] = []
                        var lastSeen: Int64 = 0
                        var cuts = 0
                        while true {
                            let done = loadDone.withLockedValue { $0 }
                            let connection = try await server.connect(reader, resume: [(Self.general, lastSeen)])
                            // Read for a random while (or, after the load, until the stream is quiet).
                            let until = NIODeadline.now() + .milliseconds(Int64.random(in: 0...60))
                            while done || NIODeadline.now() < until {
                                guard let event = await connection.nextEvent(timeout: done ? .milliseconds(500) : .milliseconds(5)) else {
                                    if done { break } else { continue }
                                }
                                guard let seq = Self.channelSeq(event), event.type != "notification.message_new" else { continue }
                                // The marker's channel_seq is where live events begin: caught up to there.
                                if event.type != "channel.resumed" { received.append(event) }
                                lastSeen = seq
                            }
                            connection.close()
                            if done { break }
                            cuts += 1
                        }
                        return (reader, received, cuts)
                    }
                }
                var results: [(String, [ChatEvent], Int)] = []
                for try await result in group { results.append(result) }
                return results
            }
            try await load.value
            for (reader, received, cuts) in flaky {
                let reference = await steady[reader]!.drain(for: .milliseconds(500))
                    .filter { Self.channelSeq($0) != nil && $0.type != "notification.message_new" }
                #expect(cuts > 3, "\(reader) was cut off \(cuts) times")
                #expect(reference.count > messages)
                let got = received.compactMap(Self.channelSeq)
                let want = reference.compactMap(Self.channelSeq)
                #expect(got == want, "\(reader): same sequences, none twice; extra \(Self.describe(received.filter { !want.contains(Self.channelSeq($0)!) })), missing \(Self.describe(reference.filter { !got.contains(Self.channelSeq($0)!) }))")
                if got == want { #expect(received.map(Self.comparable) == reference.map(Self.comparable), "\(reader): same events") }
            }
        }
    }
}
