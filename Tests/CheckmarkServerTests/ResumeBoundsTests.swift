import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension EndToEnd {
    /// Issue 42: a resume replays from the journal as the connection drains, a page at a time within
    /// the outbound limit, so that no account can make the server hold what its clients do not read.
    @Suite("Resume: replayed within the outbound limit, as the connection drains", .serialized)
    struct ResumeBoundsTests {
        static let general = TestServer.general

        static func p99(_ samples: [Double]) -> Double {
            let sorted = samples.sorted()
            return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        }

        /// The resident memory of another process, from /proc.
        static func residentBytes(of pid: Int32) -> Int {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8),
                  let pages = Int(text.split(separator: " ").dropFirst().first ?? "") else { return -1 }
            return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        }

        static func metric(_ name: String, port: Int) -> Double {
            let body = (try? httpRequest(port: port, "GET", "/metrics").body) ?? ""
            return OperationsTests.parsePrometheus(body)?[name] ?? 0
        }

        /// The attack of issue 42, as it was measured (1,583 MiB in 12 s before the fix): one user opens
        /// 40 connections, each resuming 20 channels of 250 messages of 4.9 KB from `channel_seq` 0 at
        /// connect, and never reads. The server holds at most 40 x `max_outbound_buffer` more than
        /// before the attack, plus a fixed 64 MiB (allocator slack, the journal reader's cache, the
        /// other user's traffic); every one of them is closed with 4009; another user's `mark_read`
        /// replies are not held up meanwhile (p99 under 250 ms, none over a second; about 10-50 ms here).
        @Test func fortyNeverReadingConnectionsResumingTwentyChannelsStayWithinTheOutboundLimit() async throws {
            let directory = NSTemporaryDirectory() + "checkmark-resume-attack-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let outboundLimit = 4 << 20
            let server = try ServerProcess(dataDirectory: directory, extraArguments: [
                "--set", "max_outbound_buffer=\(outboundLimit)", "--set", "slow_consumer_grace=2000",
                "--set", "commands_per_second=100000", "--set", "command_burst=100000",
            ])
            let port = server.port
            let pid = server.process.processIdentifier
            let channels = (0..<20).map { ChannelCID(type: "messaging", id: "c\($0)") }
            let auth = ["Authorization": TestServer.serverToken]
            let key = "api_key=\(TestServer.apiKey)"
            let users = try httpRequest(port: port, "POST", "/users?\(key)", body: #"{"users":{"sender":{"id":"sender"},"victim":{"id":"victim"},"other":{"id":"other"}}}"#, headers: auth)
            #expect(users.status == 201 || users.status == 200, "\(users)")
            for cid in channels {
                let created = try httpRequest(port: port, "POST", "/channels/\(cid.type)/\(cid.id)/query?\(key)",
                                              body: #"{"data":{"members":["sender","victim","other"],"created_by_id":"sender"}}"#, headers: auth)
                #expect(created.status == 201 || created.status == 200, "\(created)")
            }
            let sender = try await ChatConnection.connect(host: "127.0.0.1", port: port, apiKey: TestServer.apiKey, userID: "sender",
                                                          token: TestServer.token("sender"), group: TestServer.clientGroup)
            let text = String(repeating: "x", count: 4_900)
            for cid in channels {
                for index in 0..<249 {
                    sender.send(raw: #"{"type":"send_message","cid":"\#(cid)","message":{"id":"\#(cid.id)-m\#(index)","text":"\#(text)"}}"#)
                }
                _ = try await sender.sendMessage(cid, text: text, id: "\(cid.id)-m249")
            }
            sender.close()
            let other = try await ChatConnection.connect(host: "127.0.0.1", port: port, apiKey: TestServer.apiKey, userID: "other",
                                                         token: TestServer.token("other"), group: TestServer.clientGroup)
            /// One mark_read round trip of the other user, in ms (after a mark_unread, so that it changes state).
            func markRead(_ index: Int) async throws -> Double {
                try await other.markUnread(channels[0], messageID: "c0-m\(200 + index % 40)")
                let asked = Date()
                try await other.markRead(channels[0])
                return Date().timeIntervalSince(asked) * 1000
            }
            var quiet: [Double] = []
            for index in 0..<100 {
                quiet.append(try await markRead(index))
                try await Task.sleep(for: .milliseconds(10))
            }
            let before = Self.residentBytes(of: pid)

            // The attack: 40 connections, each resuming the 20 channels from 0 at connect, never reading.
            var resume = JSONWriter()
            resume.value(.object([("user_id", .string("victim")), ("resume", .object(channels.map { ($0.description, .number(0)) }))]))
            let query = "json=\(ChatConnection.percentEncode(String(decoding: resume.bytes, as: UTF8.self)))&api_key=\(TestServer.apiKey)&authorization=\(TestServer.token("victim"))"
            var attackers: [RawSocket] = []
            for _ in 0..<40 {
                let socket = try RawSocket(port: port, receiveBufferSize: 4096)
                socket.send("GET /connect?\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                attackers.append(socket)
            }

            // Meanwhile: the resident memory, and another user's mark_read round trips.
            let peak = NIOLockedValueBox(before)
            let attackOver = NIOLockedValueBox(false)
            let sampler = Task.detached {
                while !attackOver.withLockedValue({ $0 }) {
                    let now = Self.residentBytes(of: pid)
                    peak.withLockedValue { $0 = max($0, now) }
                    usleep(20_000)
                }
            }
            var latencies: [Double] = []
            let started = Date()
            while Date().timeIntervalSince(started) < 40 {
                // A reply that does not come within the client's 10 s counts as 10 s (main before issue 42).
                latencies.append((try? await markRead(latencies.count)) ?? 10_000)
                if latencies.count % 20 == 0, Self.metric("checkmark_slow_consumer_disconnects_total", port: port) >= 40 { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            attackOver.withLockedValue { $0 = true }
            await sampler.value
            let disconnects = Self.metric("checkmark_slow_consumer_disconnects_total", port: port)
            let grown = peak.withLockedValue { $0 } - before
            let bound = 40 * outboundLimit + (64 << 20)
            print("resume attack: resident memory grew \(grown >> 20) MiB (bound \(bound >> 20) MiB), \(Int(disconnects)) closed with 4009, "
                  + "other user's mark_read p99 \(String(format: "%.1f", Self.p99(latencies))) ms over \(latencies.count) "
                  + "(\(String(format: "%.1f", Self.p99(quiet))) ms before the attack); slowest \(latencies.sorted().suffix(5).map { Int($0) })")
            #expect(disconnects == 40, "every connection that never read was closed as a slow consumer (4009)")
            #expect(grown <= bound, "the server grew \(grown >> 20) MiB, more than 40 x max_outbound_buffer + 64 MiB")
            // Guards against replays holding the other user's commands up, not latency targets (those
            // are the benchmarks'): the suite runs beside this test on two cores.
            #expect(Self.p99(latencies) < 250, "another user's mark_read p99 \(Self.p99(latencies)) ms during the attack")
            // Before the fix one of them waited 9.7 s behind the replays (the p99 of 120 missed it).
            #expect((latencies.max() ?? 0) < 1_000, "another user's slowest mark_read took \(latencies.max() ?? 0) ms")
            withExtendedLifetime(attackers) {}
        }

        /// A client on a slow link (1 MB/s of wire bytes) resumes 200,000 missed events: it receives
        /// every one, in channel order, then the marker, then the live events that arrived during the
        /// replay, none twice. Meanwhile another watcher's live events are not delayed by the replay.
        @Test func aSlowReaderReceivesA200000EventReplayInOrderThenTheLiveEventsNoneTwice() async throws {
            let missed = 200_000
            let server = try await TestServer.start {
                $0.gateway.maxResumeEvents = 2 * missed + 100
            }
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob", "carol"])
            let service = server.server.service
            for start in stride(from: 0, to: missed, by: 2_000) {
                let sent = (start..<min(start + 2_000, missed)).map {
                    service.submit(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "m\($0)", text: "\($0)")))
                }
                for message in sent { _ = try await message.get() }
            }
            let carol = try await server.connect("carol")
            try await carol.watch(Self.general)
            /// How long a live message takes from alice's send to carol's socket, in ms.
            func liveDelays(_ count: Int, prefix: String) async throws -> [Double] {
                var delays: [Double] = []
                for index in 0..<count {
                    let sent = Date()
                    _ = try await service.submit(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "\(prefix)\(index)", text: "live"))).get()
                    _ = await carol.nextEvent(ofType: ["message.new"])
                    delays.append(Date().timeIntervalSince(sent) * 1000)
                    try await Task.sleep(for: .milliseconds(20))
                }
                return delays
            }
            let quiet = try await liveDelays(20, prefix: "q")

            // Bob resumes from 0 and reads at 1 MB/s on a thread of his own.
            let bob = try PacedClient(port: server.port, userID: "bob", resume: [(Self.general, 0)])
            let received = NIOLockedValueBox<[String]>([])
            let reader = Thread {
                let start = Date()
                while let text = bob.nextText(bytesPerSecond: 1_000_000, since: start) {
                    received.withLockedValue { $0.append(text) }
                    if text.contains(#""id":"live19""#), text.contains(#""type":"message.new""#) { break }
                }
            }
            reader.start()
            // Live messages while the replay goes on: they come after it, and carol's are not delayed.
            try await Task.sleep(for: .seconds(2))
            let duringReplay = try await liveDelays(20, prefix: "live")
            let replayRunning = received.withLockedValue { !$0.contains { $0.contains("channel.resumed") } }
            let deadline = Date().addingTimeInterval(600)
            while Date() < deadline {
                let done = received.withLockedValue { $0.last?.contains(#""id":"live19""#) == true }
                if done { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            let texts = received.withLockedValue { $0 }
            print("slow reader: \(texts.count) messages, \(bob.bytesRead >> 10) KiB read; carol's live delay p99 \(String(format: "%.1f", Self.p99(quiet))) ms "
                  + "before the replay, \(String(format: "%.1f", Self.p99(duringReplay))) ms during it")

            var ids: [String] = []
            var markerIndex: Int?
            for (index, text) in texts.enumerated() {
                let json = try JSONParser.parse(Array(text.utf8))
                if json["type"]?.stringValue == "channel.resumed" {
                    markerIndex = index
                    #expect(json["replayed"]?.intValue == missed + 20, "the messages sent before the resume, and the 20 quiet ones")
                }
                if json["type"]?.stringValue == "message.new", let id = json["message"]?["id"]?.stringValue { ids.append(id) }
            }
            let expected = (0..<missed).map { "m\($0)" } + (0..<20).map { "q\($0)" } + (0..<20).map { "live\($0)" }
            #expect(ids.count == expected.count, "\(ids.count) messages, not \(expected.count)")
            #expect(ids == expected, "every message once, in channel order, the live ones after the replay")
            let marker = try #require(markerIndex)
            #expect(texts[(marker + 1)...].filter { $0.contains(#""type":"message.new""#) }.count == 20, "the live events came after the marker")
            #expect(replayRunning, "the live events were sent while the replay went on")
            // A guard against a replay that holds the engine loop (live events then wait for seconds),
            // not a latency target: those are the benchmarks' (BENCHMARKS.md, "Resume and replay").
            // With the whole suite running beside it on two cores, p99 is 10-60 ms.
            #expect(Self.p99(duringReplay) < 250, "carol's live events waited \(Self.p99(duringReplay)) ms (p99) during the replay")
        }
    }
}
