import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import Foundation
import NIOCore
import Testing

extension EndToEnd {
    /// Rules R1-R5 over real sockets: Stream's reaction routes, the events watchers get, each viewer's
    /// own reactions in answers and channel states, refusals in Stream's error shape, and reactions
    /// surviving a restart.
    @Suite("Reactions over HTTP", .serialized)
    struct ReactionsOverHTTPTests {
        static let key = "api_key=\(TestServer.apiKey)"
        static let server = ["Authorization": TestServer.serverToken]
        static func user(_ id: String) -> [String: String] { ["Authorization": TestServer.token(id)] }

        static func json(_ answer: (status: Int, body: String)) throws -> JSONValue {
            try JSONParser.parse(Array(answer.body.utf8))
        }

        static func types(_ reactions: JSONValue?) -> [String] {
            (reactions?.arrayValue ?? []).map { "\($0["user_id"]?.stringValue ?? "?"):\($0["type"]?.stringValue ?? "?")" }
        }

        @Test func reactionsReachWatchersShowEachViewerItsOwnAndSurviveARestart() async throws {
            let directory = NSTemporaryDirectory() + "checkmark-reactions-" + UUID().uuidString
            let first = try await TestServer.start(directory: directory)
            try await first.setUp(users: ["ann", "ben", "cat"])
            let ann = try await first.connect("ann")
            _ = try await ann.watch(TestServer.general)
            try await first.run(.sendMessage(cid: TestServer.general, userID: "ann", draft: MessageDraft(id: "m1", text: "hello")))
            _ = await ann.drain()

            let liked = try first.http("POST", "/messages/m1/reaction?\(Self.key)", body: #"{"reaction":{"type":"like"}}"#, headers: Self.user("ben"))
            #expect(liked.status == 201, "\(liked.body)")
            let answer = try Self.json(liked)
            #expect(answer["reaction"]?["user"]?["id"]?.stringValue == "ben" && answer["reaction"]?["score"]?.intValue == 1)
            #expect(Self.types(answer["message"]?["own_reactions"]) == ["ben:like"], "the reacting user's view")
            #expect(answer["message"]?["reaction_counts"]?["like"]?.intValue == 1)
            let event = await ann.nextEvent(ofType: ["reaction.new"])
            #expect(event?.json?["reaction"]?["type"]?.stringValue == "like" && event?.json?["user"]?["id"]?.stringValue == "ben")
            #expect(Self.types(event?.json?["message"]?["latest_reactions"]) == ["ben:like"])
            #expect(event?.json?["message"]?["own_reactions"]?.arrayValue?.isEmpty == true, "events carry nobody's own reactions")
            #expect(event?.json?["channel"]?["cid"]?.stringValue == "messaging:general" && event?.json?["channel_seq"]?.intValue != nil)

            let clap = #"{"reaction":{"type":"clap","score":4,"user_id":"cat"}}"#
            #expect(try first.http("POST", "/messages/m1/reaction?\(Self.key)", body: clap, headers: Self.server).status == 201)
            let unique = #"{"reaction":{"type":"love"},"enforce_unique":true}"#
            #expect(try first.http("POST", "/messages/m1/reaction?\(Self.key)", body: unique, headers: Self.user("ben")).status == 201)
            #expect((await ann.nextEvent(ofType: ["reaction.updated"]))?.json?["reaction"]?["type"]?.stringValue == "love")

            // Refused, each with Stream's error code, and nothing changed.
            let refusals: [(String, String, String, [String: String], Int)] = [
                ("POST", "/messages/m1/reaction", #"{"reaction":{"type":""}}"#, Self.user("ben"), 400),
                ("POST", "/messages/m1/reaction", #"{"reaction":{"type":"like","score":0}}"#, Self.user("ben"), 400),
                ("POST", "/messages/m1/reaction", #"{"reaction":"like"}"#, Self.user("ben"), 400),
                ("POST", "/messages/m1/reaction", #"{"reaction":{"type":"like"}}"#, Self.server, 400),
                ("POST", "/messages/nope/reaction", #"{"reaction":{"type":"like"}}"#, Self.user("ben"), 404),
                ("DELETE", "/messages/m1/reaction/like", "", Self.user("ben"), 404),
                ("GET", "/messages/m1/reactions?limit=301", "", Self.user("ben"), 400),
            ]
            for (method, path, body, headers, status) in refusals {
                let answer = try first.http(method, path + (path.contains("?") ? "&" : "?") + Self.key, body: body, headers: headers)
                #expect(answer.status == status, "\(method) \(path) \(body): \(answer.body)")
                #expect((try? Self.json(answer))?["StatusCode"]?.intValue == status)
            }

            let list = try first.http("GET", "/messages/m1/reactions?\(Self.key)", headers: Self.user("ann"))
            #expect(Self.types(try Self.json(list)["reactions"]) == ["ben:love", "cat:clap"], "newest first: \(list.body)")
            let page = try first.http("GET", "/messages/m1/reactions?limit=1&offset=1&\(Self.key)", headers: Self.user("ann"))
            #expect(Self.types(try Self.json(page)["reactions"]) == ["cat:clap"])
            let taken = try first.http("DELETE", "/messages/m1/reaction/clap?user_id=cat&\(Self.key)", headers: Self.server)
            #expect(taken.status == 200, "\(taken.body)")
            #expect(try Self.json(taken)["reaction"]?["type"]?.stringValue == "clap")
            #expect((await ann.nextEvent(ofType: ["reaction.deleted"]))?.json?["reaction"]?["user_id"]?.stringValue == "cat")
            ann.close()
            await first.stop(removingData: false)

            let server = try await TestServer.start(directory: directory)
            defer { Task { await server.stop() } }
            for (viewer, own) in [("ben", ["ben:love"]), ("ann", [])] {
                let state = try Self.json(server.http("POST", "/channels/messaging/general/query?\(Self.key)", headers: Self.user(viewer)))
                let message = state["messages"]?.arrayValue?.first
                #expect(Self.types(message?["own_reactions"]) == own, "\(viewer)'s own reactions")
                #expect(Self.types(message?["latest_reactions"]) == ["ben:love"])
                #expect(message?["reaction_groups"]?["love"]?["count"]?.intValue == 1 && message?["reaction_scores"]?["love"]?.intValue == 1)
            }
            let got = try Self.json(server.http("GET", "/messages/m1?\(Self.key)", headers: Self.user("ben")))
            #expect(Self.types(got["message"]?["own_reactions"]) == ["ben:love"])

            // Journaled: a client resuming after the message gets every reaction event, whole, in order.
            let cat = try await server.connect("cat")
            _ = try await cat.watch(TestServer.general, lastSeq: 1)
            let replayed = await cat.drain().filter { $0.type.hasPrefix("reaction.") }
            #expect(replayed.map(\.type) == ["reaction.new", "reaction.new", "reaction.updated", "reaction.deleted"])
            #expect(replayed.allSatisfy { $0.json?["channel"]?["cid"]?.stringValue == "messaging:general" && $0.json?["reaction"] != nil })
            // 1 is the message's message.new, 2 its notification.message_new (never replayed).
            #expect(replayed.compactMap { $0.json?["channel_seq"]?.intValue } == [3, 4, 5, 6])
            cat.close()
        }
    }
}
