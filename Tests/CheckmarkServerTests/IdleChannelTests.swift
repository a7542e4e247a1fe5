import CCheckmarkMemory
import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import CheckmarkStorage
import CheckmarkWire
import CoreMetrics
import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing

/// Issue 44: memory follows activity. A channel loaded (or created) on a single node goes back to
/// storage once it has had no watcher and no change for `channel_idle_timeout`, and loads again on its
/// next use; clients see no difference, and nothing it held is lost or written twice.
@Suite("Idle channels go back to storage")
struct IdleChannelTests {
    static let general = TestServer.general
    static let team = DormantStartTests.team
    static let quiet = DormantStartTests.quiet

    /// Polls until `cids` are dormant (the sweep runs every quarter of the one-second idle time).
    static func waitUntilDormant(_ cids: [ChannelCID], _ server: TestServer, within seconds: Double = 8) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let dormant = try await DormantStartTests.residency(server).dormant
            if Set(cids).isSubset(of: dormant) { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    static func passes(of userID: String, in cid: ChannelCID, _ server: TestServer) async throws -> ReadState? {
        try await server.server.service.read { engine in try engine.channel(cid).members[userID]?.read }.get()
    }

    @Test func anIdleChannelLeavesMemoryAndAnswersAsBeforeOnceLoadedAgain() async throws {
        let directory = NSTemporaryDirectory() + "checkmark-idle-" + UUID().uuidString
        let server = try await TestServer.start(directory: directory) { $0.channelIdleTimeoutSeconds = 1 }
        try await DormantStartTests.fill(server)
        let ben = try await server.connect("ben")
        let expectedMe = ben.me
        let expected = try DormantStartTests.answers(server)
        let catRead = try await Self.passes(of: "cat", in: Self.general, server)
        ben.close()

        #expect(try await Self.waitUntilDormant([Self.general, Self.team, Self.quiet], server))
        let metrics = try server.http("GET", "/metrics").body
        #expect(metrics.split(separator: "\n").contains("checkmark_channel_unloads_total 3"),
                "\(metrics.split(separator: "\n").filter { $0.contains("channel_") })")
        // Totals over channels none of which is in memory; then the same answers, loading them again.
        let again = try await server.connect("ben")
        for field in ["total_unread_count", "unread_channels", "unread_threads"] {
            #expect(again.me[field] != nil && again.me[field] == expectedMe[field], "\(field)")
        }
        let answers = try DormantStartTests.answers(server)
        for (index, answer) in answers.enumerated() { #expect(answer == expected[index], "answer \(index)") }
        #expect(try await Self.passes(of: "cat", in: Self.general, server) == catRead)
        again.close()

        // Reads of a channel loaded again are written once (storage forgot what it had written of
        // the evicted channel's passes, and learnt it again at the load): a restart reads them back equal.
        #expect(try await Self.waitUntilDormant([Self.general], server))
        try await server.run(.markRead(cid: Self.general, userID: "cat", messageID: "g5"))
        try await server.run(.markDelivered(userID: "ben", latest: [DeliveredTarget(cid: Self.general, messageID: "g6")]))
        let catAfter = try await Self.passes(of: "cat", in: Self.general, server)
        let benAfter = try await Self.passes(of: "ben", in: Self.general, server)
        #expect(catAfter != catRead && benAfter?.deliveredPasses.isEmpty == false)
        await server.stop(removingData: false)

        let restarted = try await TestServer.start(directory: directory)
        defer { Task { await restarted.stop() } }
        #expect(try await Self.passes(of: "cat", in: Self.general, restarted) == catAfter)
        #expect(try await Self.passes(of: "ben", in: Self.general, restarted) == benAfter)
    }

    @Test func aWatchedChannelStaysInMemoryWhileTheOthersLeave() async throws {
        let server = try await TestServer.start { $0.channelIdleTimeoutSeconds = 1 }
        defer { Task { await server.stop() } }
        try await DormantStartTests.fill(server)
        let cat = try await server.connect("cat")
        _ = try await cat.watch(Self.quiet)
        #expect(try await Self.waitUntilDormant([Self.general, Self.team], server))
        try await Task.sleep(for: .milliseconds(1_500))
        #expect(try await DormantStartTests.residency(server).loaded == [Self.quiet])
        // Its watcher still gets what happens there.
        let ann = try await server.connect("ann")
        _ = try await ann.sendMessage(Self.quiet, text: "still here", id: "q2")
        guard case .event(_, let json)? = await cat.nextEvent(ofType: ["message.new"]) else {
            Issue.record("no message.new")
            return
        }
        #expect(json["message"]?["id"]?.stringValue == "q2")
        cat.close()
        ann.close()
    }

    /// Regression: the shim tested for glibc before including any C library header, so it never trimmed
    /// and resident memory stayed at its peak after channels left.
    @Test func memoryFreedInSmallPiecesGoesBackToTheSystem() {
        #if canImport(Glibc)
        // 64 MiB in 64-byte pieces (far below the size glibc maps apart), with one piece after them kept:
        // freeing them cannot shrink the heap from its top, so only a trim gives their pages back.
        var pieces: [UnsafeMutableRawPointer] = []
        pieces.reserveCapacity(1 << 20)
        for _ in 0..<(1 << 20) { pieces.append(malloc(64)!) }
        let kept = malloc(64)
        for piece in pieces { free(piece) }
        #expect(checkmark_return_free_memory() == 1)
        free(kept)
        #endif
    }

    @Test func zeroKeepsLoadedChannelsInMemory() {
        var configuration = ServerConfiguration()
        #expect(configuration.channelIdleTimeout == .seconds(300))
        configuration.channelIdleTimeoutSeconds = 1
        #expect(configuration.channelIdleTimeout == .seconds(1))
        configuration.channelIdleTimeoutSeconds = 0
        #expect(configuration.channelIdleTimeout == nil)
    }

    @Test func aMessageLookUpStorageCannotAnswerIsStorageUnavailable() async throws {
        let directory = NSTemporaryDirectory() + "checkmark-idle-lookup-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(directory: try DataDirectory(path: directory))
        var logger = Logger(label: "checkmark-test")
        logger.logLevel = .critical
        let service = try await ReceiptsService.start(
            store: store, engineLoop: MultiThreadedEventLoopGroup.singleton.next(),
            metrics: ServiceMetrics(factory: NOOPMetricsHandler.instance), logger: logger)
        store.close()
        do {
            _ = try await service.channels(holdingMessage: "m1").get()
            Issue.record("a closed store answered")
        } catch {
            #expect(WireError(any: error).httpStatus == 503 && WireError(any: error).code == "storage_unavailable", "\(error)")
        }
    }
}
