import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import CheckmarkStorage
import Foundation
import NIOCore
import Testing

extension EndToEnd {
    /// `checkmark replay run`: a trace recorded from a real server replays with zero differences, a
    /// build whose rules differ is caught by the diff, and privacy flips never let a withheld receipt
    /// through (docs/replay.md).
    @Suite("Replay: record, re-run, diff", .serialized)
    struct ReplayTests {
        static let general = TestServer.general

        /// Records a session with privacy flips over real sockets and returns the trace's lines.
        static func recordSession() async throws -> [TraceLine] {
            let trace = NSTemporaryDirectory() + "checkmark-trace-\(UUID().uuidString).jsonl"
            defer { try? FileManager.default.removeItem(atPath: trace) }
            let server = try await TestServer.start { $0.recordPath = trace }
            try await server.run(.createChannelType(ChannelType(name: "team", readEvents: true, deliveryEvents: true)))
            let team = ChannelCID(type: "team", id: "core")
            try await server.setUp(users: ["alice", "bob", "carol"], cid: team)
            let alice = try await server.connect("alice")
            let bob = try await server.connect("bob")
            let carol = try await server.connect("carol")
            for connection in [alice, bob, carol] { try await connection.watch(team) }
            for round in 1...4 {
                let id = "m\(round)"
                try await alice.sendMessage(team, text: "round \(round)", id: id)
                try await bob.markDelivered([(team, id)])
                // Carol turns her receipts off on even rounds and on again on odd ones.
                let enabled = round % 2 == 1
                try await server.run(.updateUser(UserPatch(id: "carol", set: [("privacy_settings", .object([
                    ("read_receipts", .object([("enabled", .bool(enabled))])),
                    ("delivery_receipts", .object([("enabled", .bool(enabled))])),
                ]))])))
                try await carol.markDelivered([(team, id)])
                try await carol.markRead(team)
                try await bob.markRead(team, messageID: id)
            }
            try await alice.markUnread(team, messageID: "m3")
            bob.close()
            try await alice.sendMessage(team, text: "after bob left", id: "m5")
            // Edits and deletes (rules M1-M6), by the author and by the server.
            try await server.run(.updateMessage(cid: team, messageID: "m2", text: "round 2, edited", by: "alice"))
            try await server.run(.deleteMessage(cid: team, messageID: "m1", hard: false, by: "alice"))
            try await server.run(.deleteMessage(cid: team, messageID: "m3", hard: true, by: nil))
            // Reactions (rules R1-R5): sent, sent again, replacing, taken back.
            try await server.run(.sendReaction(cid: team, messageID: "m2", userID: "carol", type: "like", score: 1, enforceUnique: false))
            try await server.run(.sendReaction(cid: team, messageID: "m2", userID: "alice", type: "clap", score: 2, enforceUnique: false))
            try await server.run(.sendReaction(cid: team, messageID: "m2", userID: "alice", type: "clap", score: 5, enforceUnique: false))
            try await server.run(.sendReaction(cid: team, messageID: "m2", userID: "carol", type: "love", score: 1, enforceUnique: true))
            try await server.run(.deleteReaction(cid: team, messageID: "m2", userID: "alice", type: "clap"))
            _ = await carol.drain()
            await server.stop()
            return try TraceFile.lines(atPath: trace)
        }

        @Test func recordedTraceReplaysWithZeroDifferences() async throws {
            let lines = try await Self.recordSession()
            let report = try await ReplayRunner.run(lines)
            #expect(report.differences == [])
            #expect(report.privacyViolations == [])
            #expect(report.connections == 3 && report.eventsCompared > 40)
        }

        /// Every member watches in the recorded session: each message's notification.message_new
        /// reaches no connection and no resume replays it, so its JSON (the largest event's) is never
        /// made; message.new's is.
        @Test func aNotificationNoConnectionReceivesIsNotEncoded() async throws {
            let events = try await Self.recordSession().compactMap { line -> TraceEvent? in if case .event(let e) = line { e } else { nil } }
            let notifications = events.filter { $0.type == "notification.message_new" }
            #expect(notifications.count == 5)
            #expect(notifications.allSatisfy { $0.recipients == [] && $0.json.isEmpty })
            #expect(events.filter { $0.type == "message.new" }.allSatisfy { !$0.json.isEmpty })
        }

        @Test func buildThatForgetsDeliveryReceiptsIsCaughtByTheDiff() async throws {
            let lines = try await Self.recordSession()
            let report = try await ReplayRunner.run(lines, alteration: { outcome in
                outcome.events.removeAll { $0.type == "message.delivered" }
            })
            #expect(!report.passed)
            #expect(report.differences.count == 3, "every connection saw a delivery receipt")
            #expect(report.differences.allSatisfy { $0.contains("message.delivered") })
        }

        @Test func privacyFlipsNeverLetAWithheldReceiptThrough() async throws {
            let lines = try await Self.recordSession()
            // The trace holds receipts carol's settings withheld: they went to her connection only.
            let withheld = lines.filter {
                guard case .event(let event) = $0, event.type == "message.read", event.audience == .userWatching("carol") else { return false }
                return event.recipients?.allSatisfy { $0.userID == "carol" } == true
            }
            #expect(withheld.count == 2)
            let report = try await ReplayRunner.run(lines)
            #expect(report.privacyViolations == [])
            // A build that shows carol's reads to everyone is caught by the privacy check, not only the diff.
            let leaky = try await ReplayRunner.run(lines, alteration: { outcome in
                for index in outcome.events.indices where outcome.events[index].type == "message.read" {
                    outcome.events[index].recipients.append(Recipient(
                        connection: ConnectionHandle(slot: .max, serial: 0), connectionID: "eavesdropper", userID: "mallory", counts: nil))
                }
            })
            #expect(leaky.privacyViolations.count == 2)
            #expect(leaky.privacyViolations.allSatisfy { $0.contains("of carol") && $0.contains("mallory") })
        }

        @Test func fullDiskStopsTheRecordingNotTheServer() async throws {
            let server = try await TestServer.start { $0.recordPath = "/dev/full" }
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob"])
            // Far more than stdio's buffer: the writes fail part way.
            for index in 1...300 {
                try await server.run(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "m\(index)", text: String(repeating: "x", count: 200))))
            }
            let state = try await server.server.service.read { engine in try engine.channel(Self.general).messages.count }.get()
            #expect(state == 300)
        }

        @Test func recordedPaceIsKeptTimesTheSpeed() throws {
            let plan = try ReplayPlan([
                .command(seq: 1, at: Timestamp(rawValue: 1_000_000), command: .disconnect(connectionID: "a")),
                .command(seq: 2, at: Timestamp(rawValue: 2_000_000), command: .disconnect(connectionID: "b")),
            ])
            #expect(plan.pause(before: 1, speed: 2) == 0.5)
            #expect(plan.pause(before: 1, speed: nil) == nil && plan.pause(before: 0, speed: 1) == nil)
        }

        @Test func traceLinesRoundTripAndBadLinesSayWhere() throws {
            let line = TraceLine.event(TraceEvent(
                commandSeq: 3, type: "message.read", cid: Self.general, channelSeq: 9, audience: .userWatching("carol"),
                recipients: [TracedRecipient(connectionID: "c1", userID: "carol", counts: nil)], json: Array(#"{"type":"message.read"}"#.utf8)))
            #expect(try TraceLine.parse(line.json, number: 1) == line)
            let pruned = TraceLine.pruned(PrunedHistory(commandsBefore: 40, channels: [.init(cid: Self.general, throughChannelSeq: 77)]))
            #expect(String(decoding: pruned.json, as: UTF8.self)
                == #"{"kind":"pruned","commands_before":40,"channels":[{"cid":"messaging:general","through_channel_seq":77}]}"#)
            #expect(try TraceLine.parse(pruned.json, number: 1) == pruned)
            #expect(throws: TraceLine.Failure.self) { try TraceLine.parse(Array(#"{"kind":"pruned","channels":[{"cid":"x"}]}"#.utf8), number: 2) }
            #expect(throws: TraceLine.Failure.self) { try TraceLine.parse(Array(#"{"kind":"event"}"#.utf8), number: 7) }
            #expect {
                try TraceLine.parse(Array("not json".utf8), number: 12)
            } throws: { ($0 as? TraceLine.Failure)?.description.hasPrefix("trace line 12:") == true }
        }

        @Test func journalExportCannotBeRunButCanBeInspected() async throws {
            let server = try await TestServer.start()
            try await server.setUp(users: ["alice", "bob"])
            try await server.run(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "m1", text: "hi")))
            try await server.run(.markRead(cid: Self.general, userID: "bob", messageID: nil))
            await server.stop(removingData: false)
            defer { try? FileManager.default.removeItem(atPath: server.directory) }
            let lines = try TraceFile.journalLines(dataDirectory: server.directory)
            let reads = TraceFilter(user: "bob", types: ["message.read"]).apply(lines)
            #expect(reads.count == 2, "the mark read command and its message.read")
            // Channel sequence 1 is m1's message.new, 2 its notification.message_new, 3 bob's read.
            #expect(TraceFilter.describe(reads[1]).contains("message.read messaging:general seq=3 user=bob"))
            // No resume replays a notification.message_new: the journal keeps its place, not its JSON.
            let notification = try #require(lines.first { if case .event(let e) = $0 { e.type == "notification.message_new" } else { false } })
            #expect(String(decoding: notification.json, as: UTF8.self).hasSuffix(#""audience":"non_watching_members","event":null}"#))
            #expect(try TraceLine.parse(notification.json, number: 1) == notification)
            await #expect(throws: ReplayPlan.Unrunnable.self) { try await ReplayRunner.run(lines) }
            #expect(!lines.contains { if case .pruned = $0 { true } else { false } }, "nothing was pruned")
        }

        /// Issue 44: a prune follows the history written, not only the minute: once as many events as a
        /// channel keeps were journaled since the last prune, the next one is due, so that the
        /// database does not grow by a minute of writes past what retention keeps.
        @Test func aPruneIsDueOnceAsManyEventsAsAChannelKeepsWereJournaled() async throws {
            let server = try await TestServer.start { $0.journalMaxEventsPerChannel = 4 }
            try await server.setUp(users: ["alice", "bob"])
            try await Task.sleep(for: .milliseconds(1_500))  // past the first prune, a second after start
            for index in 1...12 {
                try await server.run(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "m\(index)", text: "hi")))
            }
            try await Task.sleep(for: .milliseconds(2_500))
            await server.stop(removingData: false)
            defer { try? FileManager.default.removeItem(atPath: server.directory) }
            let lines = try TraceFile.journalLines(dataDirectory: server.directory)
            let events = lines.filter { if case .event(let event) = $0 { event.cid == Self.general } else { false } }
            #expect(events.count == 4, "24 channel events were journaled; the newest 4 are kept")
        }

        /// An export of a pruned journal says first what it no longer has, whatever the filter.
        @Test func anExportOfAPrunedJournalSaysWhatItNoLongerHas() async throws {
            let server = try await TestServer.start()
            try await server.setUp(users: ["alice", "bob"])
            for index in 1...3 {
                try await server.run(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "m\(index)", text: "hi")))
            }
            _ = try await server.server.service.prune(RetentionPolicy(maxEventsPerChannel: 2)).get()
            await server.stop(removingData: false)
            defer { try? FileManager.default.removeItem(atPath: server.directory) }
            let lines = try TraceFile.journalLines(dataDirectory: server.directory)
            // Three messages made six channel events; the newest two are kept, and of the commands
            // only the last send, which made them.
            let commands = lines.compactMap { if case .command(let seq, _, _) = $0 { seq } else { nil } }
            let last = try #require(commands.first)
            #expect(commands == [last])
            #expect(lines.first == .pruned(PrunedHistory(commandsBefore: last, channels: [.init(cid: Self.general, throughChannelSeq: 4)])))
            let filtered = TraceFilter(user: "nobody").apply(lines)
            #expect(filtered.count == 1 && TraceFilter.describe(filtered[0]) ==
                "pruned (retention): the journal no longer has commands before #\(last) that have no event left; events of messaging:general through seq=4")
        }
    }
}
