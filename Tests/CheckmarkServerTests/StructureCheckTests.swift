import CheckmarkCore
import CheckmarkServer
import CheckmarkStorage
import Foundation
import GRDB
import Testing

extension EndToEnd {
    /// Issue 44: the structure check of every database page runs after start instead of before (its
    /// time grew with history); a damaged page it finds stops the server as a failed commit would.
    @Suite("Database structure check after start")
    struct StructureCheckTests {
        @Test func aDamagedPageFoundAfterStartStopsTheServer() async throws {
            let first = try await TestServer.start()
            try await first.setUp(users: ["alice", "bob"])
            for index in 0..<600 {
                try await first.run(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "m\(index)", text: "hello")))
            }
            await first.stop(removingData: false)
            defer { try? FileManager.default.removeItem(atPath: first.directory) }
            let path = first.directory + "/checkmark.sqlite"
            let (page, pageSize) = try {
                let queue = try DatabaseQueue(path: path)
                defer { try? queue.close() }
                return try queue.read { db in
                    (try Int.fetchOne(db, sql: "SELECT pageno FROM dbstat WHERE name = 'journal_at' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1")!,
                     try Int.fetchOne(db, sql: "PRAGMA page_size")!)
                }
            }()
            let file = try #require(FileHandle(forUpdatingAtPath: path))
            try file.seek(toOffset: UInt64((page - 1) * pageSize))
            try file.write(contentsOf: Data(repeating: 0xA5, count: pageSize))
            try file.close()

            let server = try await TestServer.start(directory: first.directory)
            let deadline = Date().addingTimeInterval(10)
            while server.server.fatalError == nil && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            guard case .corrupt = server.server.fatalError else {
                Issue.record("the server kept running on a damaged database: \(String(describing: server.server.fatalError))")
                await server.stop(removingData: false)
                return
            }
            await server.server.waitUntilStopped()
        }

        static let general = ChannelCID(type: "messaging", id: "general")
    }
}
