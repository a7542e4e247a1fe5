import CheckmarkCore
@testable import CheckmarkServer
import CheckmarkStorage
import CoreMetrics
import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing

/// Issue 44: the service journals a message once. A `send_message` names the message it made, and its
/// `message.new` where the message object is, so that storage keeps neither twice.
@Suite("Service: a sent message is journaled by reference")
struct ServiceJournalTests {
    @Test func aSendNamesItsMessageAndItsMessageNewTheObject() async throws {
        let directory = NSTemporaryDirectory() + "checkmark-journal-form-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = RecordingCommitStore(try SQLiteStore(directory: try DataDirectory(path: directory)))
        var logger = Logger(label: "checkmark-test")
        logger.logLevel = .critical
        let service = try await ReceiptsService.start(store: store, engineLoop: MultiThreadedEventLoopGroup.singleton.next(),
                                                      metrics: ServiceMetrics(factory: NOOPMetricsHandler.instance), logger: logger)
        let general = ChannelCID(type: "messaging", id: "general")
        _ = try await service.submit(.upsertUser(User(id: "ann"))).get()
        _ = try await service.submit(.createChannel(cid: general, createdBy: "ann", members: ["ann"])).get()
        for id in ["m1", "m2"] {
            _ = try await service.submit(.sendMessage(cid: general, userID: "ann", draft: MessageDraft(id: id, text: "text of \(id)"))).get()
        }
        await service.close()
        let sends = store.entries.filter { if case .sendMessage = $0.command { true } else { false } }
        #expect(sends.map(\.messagePosition) == [0, 1])
        let messageNew = sends.flatMap(\.events).filter { $0.type == "message.new" }
        #expect(messageNew.count == 2 && messageNew.allSatisfy { event in
            guard let reference = event.message else { return false }
            return reference.fits(event.json) && String(decoding: event.json[reference.offset..<(reference.offset + reference.length)], as: UTF8.self)
                .hasPrefix(#"{"id":"m"#)
        })
        #expect(messageNew.map { $0.message?.position } == [0, 1])
    }
}
