import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import Foundation
import NIOCore
import Testing

extension EndToEnd {
    /// Rules M1-M6 over real sockets: Stream's edit and delete routes change a message, watchers get
    /// `message.updated` and `message.deleted` with a channel sequence, refusals get Stream's error
    /// shape, and the changes survive a restart, read back from storage where the text is archived.
    @Suite("Edits and deletes over HTTP", .serialized)
    struct MessageEditsOverHTTPTests {
        static let key = "api_key=\(TestServer.apiKey)"
        static let server = ["Authorization": TestServer.serverToken]
        static func user(_ id: String) -> [String: String] { ["Authorization": TestServer.token(id)] }

        static func json(_ answer: (status: Int, body: String)) throws -> JSONValue {
            try JSONParser.parse(Array(answer.body.utf8))
        }

        @Test func editsAndDeletesReachWatchersAndSurviveARestartPastTheWindow() async throws {
            let directory = NSTemporaryDirectory() + "checkmark-edits-" + UUID().uuidString
            let first = try await TestServer.start(directory: directory)
            try await first.setUp(users: ["ann", "ben"])
            let ben = try await first.connect("ben")
            _ = try await ben.watch(TestServer.general)
            for i in 1...4 { try await first.run(.sendMessage(cid: TestServer.general, userID: "ann", draft: MessageDraft(id: "m\(i)", text: "text \(i)"))) }
            _ = await ben.drain()

            let edited = try first.http("POST", "/messages/m1?\(Self.key)", body: #"{"message":{"id":"m1","text":"edited","attachments":[],"pinned":false}}"#,
                                         headers: Self.user("ann"))
            #expect(edited.status == 200, "\(edited.body)")
            let message = try Self.json(edited)["message"]
            #expect(message?["text"]?.stringValue == "edited" && message?["message_text_updated_at"]?.stringValue != nil)
            #expect(message?["updated_at"]?.stringValue != message?["created_at"]?.stringValue)
            let updated = await ben.nextEvent(ofType: ["message.updated"])
            #expect(updated?.json?["message"]?["text"]?.stringValue == "edited" && updated?.json?["user"]?["id"]?.stringValue == "ann")
            #expect(updated?.json?["channel_seq"]?.intValue != nil, "journaled: a resuming client gets it")

            let partial = try first.http("PUT", "/messages/m2?\(Self.key)", body: #"{"set":{"text":"partly"}}"#, headers: Self.user("ann"))
            #expect(partial.status == 200, "\(partial.body)")
            #expect(try Self.json(partial)["message"]?["text"]?.stringValue == "partly")
            let deleted = try first.http("DELETE", "/messages/m2?\(Self.key)", headers: Self.user("ann"))
            #expect(deleted.status == 200, "\(deleted.body)")
            #expect(try Self.json(deleted)["message"]?["type"]?.stringValue == "deleted")
            let deletedEvent = await ben.nextEvent(ofType: ["message.deleted"])
            #expect(deletedEvent?.json?["hard_delete"]?.boolValue == false && deletedEvent?.json?["message"]?["deleted_at"] != nil)
            let hard = try first.http("DELETE", "/messages/m3?hard=true&\(Self.key)", headers: Self.server)
            #expect(hard.status == 200, "\(hard.body)")
            #expect(try Self.json(hard)["message"]?["text"]?.stringValue == "")
            #expect((await ben.nextEvent(ofType: ["message.deleted"]))?.json?["hard_delete"]?.boolValue == true)

            // Refused, each with Stream's error code, and nothing changed.
            let refusals: [(String, String, String, [String: String], Int)] = [
                ("POST", "/messages/m4", #"{"message":{"text":"not mine"}}"#, Self.user("ben"), 403),
                ("DELETE", "/messages/m4?hard=true", "", Self.user("ann"), 403),
                ("DELETE", "/messages/m4?delete_for_me=true", "", Self.user("ann"), 501),
                ("DELETE", "/messages/m4", #"{"delete_for_me":true}"#, Self.user("ann"), 501),
                ("DELETE", "/messages/m4?hard=maybe", "", Self.server, 400),
                ("PUT", "/messages/m4", #"{"set":{"pinned":true}}"#, Self.user("ann"), 400),
                ("PUT", "/messages/m4", #"{"set":{"text":"a"},"unset":["text"]}"#, Self.user("ann"), 400),
                ("PUT", "/messages/m4", "{}", Self.user("ann"), 400),
                ("POST", "/messages/m4", #"{"message":{"id":"m1","text":"x"}}"#, Self.user("ann"), 400),
                ("POST", "/messages/m2", #"{"message":{"text":"deleted already"}}"#, Self.user("ann"), 400),
                ("POST", "/messages/nope", #"{"message":{"text":"x"}}"#, Self.user("ann"), 404),
            ]
            for (method, path, body, headers, status) in refusals {
                let answer = try first.http(method, path + (path.contains("?") ? "&" : "?") + Self.key, body: body, headers: headers)
                #expect(answer.status == status, "\(method) \(path) \(body): \(answer.body)")
                #expect((try? Self.json(answer))?["StatusCode"]?.intValue == status)
            }
            #expect(await ben.drain().filter { $0.type.hasPrefix("message.") }.isEmpty, "refusals send nothing")
            ben.close()
            await first.stop(removingData: false)

            // A window of one: m1-m3 come back from storage, their edits with them.
            let server = try await TestServer.start(directory: directory) { $0.messageWindow = 1 }
            defer { Task { await server.stop() } }
            let page = try server.http("POST", "/channels/messaging/general/query?\(Self.key)", body: #"{"user_id":"ben"}"#, headers: Self.server)
            let messages = try Self.json(page)["messages"]?.arrayValue ?? []
            #expect(messages.map { $0["text"]?.stringValue ?? "?" } == ["edited", "partly", "", "text 4"], "\(page.body)")
            #expect(messages.map { $0["type"]?.stringValue ?? "?" } == ["regular", "deleted", "deleted", "regular"])
            let one = try server.http("GET", "/messages/m1?\(Self.key)", headers: Self.user("ben"))
            #expect(try Self.json(one)["message"]?["text"]?.stringValue == "edited")
            #expect(try Self.json(page)["read"]?.arrayValue?.first { $0["user"]?["id"]?.stringValue == "ben" }?["unread_messages"]?.intValue == 4,
                    "deletes change no unread count (rule M6)")
            // Editing an archived message reads its text back first, then holds the new one until stored.
            let again = try server.http("POST", "/messages/m1?\(Self.key)", body: #"{"message":{"text":"edited twice","user_id":"ann"}}"#, headers: Self.server)
            #expect(again.status == 200, "\(again.body)")
            #expect(try Self.json(again)["message"]?["text"]?.stringValue == "edited twice")
            #expect(try Self.json(server.http("GET", "/messages/m1?\(Self.key)", headers: Self.user("ben")))["message"]?["text"]?.stringValue == "edited twice")
        }
    }
}
