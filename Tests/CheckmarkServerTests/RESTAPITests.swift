import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import Foundation
import NIOCore
import Testing

extension EndToEnd {
    /// The Stream-compatible REST API over real sockets: every kind of bad request gets Stream's error
    /// shape with the right status and code, and REST changes reach WebSocket clients.
    @Suite("REST API", .serialized)
    struct RESTAPITests {
        static let key = "api_key=\(TestServer.apiKey)"
        static var server: [String: String] { ["Authorization": TestServer.serverToken] }
        static func user(_ id: String) -> [String: String] { ["Authorization": TestServer.token(id)] }

        struct Refusal: Sendable, CustomStringConvertible {
            var name: String
            var method = "POST"
            var path: String
            var body = "{}"
            var headers: [String: String] = RESTAPITests.server
            var status: Int
            var code: Int
            var description: String { name }
        }

        static let refusals: [Refusal] = [
            Refusal(name: "bad JSON", path: "/channels/messaging/room/read?\(key)", body: "{", status: 400, code: 4),
            Refusal(name: "body not an object", path: "/channels/read?\(key)", body: "[]", status: 400, code: 4),
            Refusal(name: "message without text", path: "/channels/messaging/room/message?\(key)",
                    body: #"{"message":{"user_id":"ann"}}"#, status: 400, code: 4),
            Refusal(name: "flag of the wrong type", path: "/channeltypes?\(key)", body: #"{"name":"t1","read_events":"yes"}"#, status: 400, code: 4),
            Refusal(name: "server call naming no user", path: "/channels/messaging/room/read?\(key)", status: 400, code: 4),
            Refusal(name: "unsupported filter", path: "/channels?\(key)", body: #"{"user_id":"ann","filter_conditions":{"name":"x"}}"#,
                    status: 400, code: 4),
            Refusal(name: "limit over 30", path: "/channels?\(key)", body: #"{"user_id":"ann","limit":31}"#, status: 400, code: 4),
            Refusal(name: "unsupported channel update", path: "/channels/messaging/room?\(key)", body: #"{"invites":["ben"]}"#, status: 400, code: 4),
            Refusal(name: "unknown channel", path: "/channels/messaging/nowhere/read?\(key)", body: #"{"user_id":"ann"}"#, status: 404, code: 16),
            Refusal(name: "unknown message", path: "/channels/messaging/room/read?\(key)", body: #"{"user_id":"ann","message_id":"nope"}"#,
                    status: 404, code: 16),
            Refusal(name: "unknown user", method: "GET", path: "/unread?\(key)&user_id=ghost", body: "", status: 404, code: 16),
            Refusal(name: "unknown channel type", method: "GET", path: "/channeltypes/nope?\(key)", body: "", status: 404, code: 16),
            Refusal(name: "not a member", path: "/channels/messaging/room/read?\(key)", headers: user("zed"), status: 403, code: 17),
            Refusal(name: "user token acting for another user", path: "/channels/messaging/room/read?\(key)",
                    body: #"{"user":{"id":"ben"}}"#, headers: user("ann"), status: 403, code: 17),
            Refusal(name: "user token on a server route", path: "/channeltypes?\(key)", body: #"{"name":"mine"}"#, headers: user("ann"),
                    status: 403, code: 17),
            Refusal(name: "user token querying a channel it is not in", path: "/channels/messaging/room/query?\(key)", headers: user("zed"),
                    status: 403, code: 17),
            Refusal(name: "no api_key", path: "/channels/read", status: 401, code: 5),
            Refusal(name: "wrong api_key", path: "/channels/read?api_key=nope", status: 401, code: 5),
            Refusal(name: "no token", path: "/channels/read?\(key)", headers: [:], status: 401, code: 5),
            Refusal(name: "token with a bad signature", path: "/channels/read?\(key)",
                    headers: ["Authorization": TestServer.token("ann", secret: "wrong-secret")], status: 401, code: 5),
            Refusal(name: "expired token", path: "/channels/read?\(key)", headers: ["Authorization": TestServer.token("ann", expiresIn: -60)],
                    status: 401, code: 40),
            Refusal(name: "mark unread past the last 100 messages", path: "/channels/messaging/room/unread?\(key)",
                    body: #"{"user_id":"ben","message_id":"old"}"#, status: 400, code: 4),
            Refusal(name: "payload too large", path: "/channels/messaging/room/message?\(key)",
                    body: #"{"message":{"user_id":"ann","text":""# + String(repeating: "x", count: 1 << 20) + #""}}"#, status: 413, code: 22),
            Refusal(name: "unknown route", method: "GET", path: "/nothing?\(key)", body: "", status: 404, code: 16),
            Refusal(name: "wrong method", method: "DELETE", path: "/users?\(key)", body: "", status: 405, code: 4),
        ]

        @Test func everyKindOfBadRequestGetsStreamsErrorShapeStatusAndCode() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["ann", "ben", "zed"], cid: ChannelCID(type: "messaging", id: "room"), members: ["ann", "ben"])
            let room = ChannelCID(type: "messaging", id: "room")
            try await server.run(.sendMessage(cid: room, userID: "ann", draft: MessageDraft(id: "old", text: "old")))
            for i in 0..<100 { try await server.run(.sendMessage(cid: room, userID: "ann", draft: MessageDraft(text: "\(i)"))) }

            for refusal in Self.refusals {
                let response = try server.http(refusal.method, refusal.path, body: refusal.body, headers: refusal.headers)
                #expect(response.status == refusal.status, "\(refusal): \(response.body)")
                let json = try? JSONParser.parse(Array(response.body.utf8))
                #expect(json?["code"]?.intValue == refusal.code, "\(refusal): \(response.body)")
                #expect(json?["StatusCode"]?.intValue == refusal.status, "\(refusal)")
                #expect(json?["message"]?.stringValue?.isEmpty == false, "\(refusal)")
                #expect(json?["duration"]?.stringValue?.hasSuffix("ms") == true, "\(refusal)")
            }
            // Nothing refused changed anything: the room still has its 101 messages and ben's read state.
            let state = try server.http("POST", "/channels/messaging/room/query?\(Self.key)", headers: Self.user("ben"))
            #expect(state.status == 200 && state.body.contains(#""unread_messages":101"#))
        }

        @Test func getMessageAnswersItWithItsChannelToMembersOnly() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["ann", "ben", "zed"], members: ["ann", "ben"])
            try await server.run(.sendMessage(cid: TestServer.general, userID: "ann", draft: MessageDraft(id: "p1", text: "parent")))
            try await server.run(.sendMessage(cid: TestServer.general, userID: "ben", draft: MessageDraft(id: "r1", text: "reply", parentID: "p1")))
            let got = try server.http("GET", "/messages/p1?\(Self.key)", headers: Self.user("ben"))
            #expect(got.status == 200, "\(got.body)")
            let json = try JSONParser.parse(Array(got.body.utf8))
            #expect(json["message"]?["text"]?.stringValue == "parent" && json["message"]?["reply_count"]?.intValue == 1)
            #expect(json["message"]?["channel"]?["cid"]?.stringValue == "messaging:general")
            #expect(try server.http("GET", "/messages/r1?\(Self.key)", headers: Self.server).status == 200, "a reply too, for a server token")
            #expect(try server.http("GET", "/messages/p1?\(Self.key)", headers: Self.user("zed")).status == 404, "not a member: as if absent")
            #expect(try server.http("GET", "/messages/nope?\(Self.key)", headers: Self.user("ann")).status == 404)
        }

        /// Found by reading Stream's iOS SDK (issue 47): its channel list queries with `GET /channels?payload=`,
        /// answered 405. The same query as POST's body gives the same answer; no payload, or one not a
        /// JSON object, is 400.
        @Test func channelsQueriedByGetWithAPayloadAnswerAsByPost() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["ann", "ben"])
            try await server.run(.sendMessage(cid: TestServer.general, userID: "ann", draft: MessageDraft(id: "m1", text: "hello")))
            let query = #"{"filter_conditions":{"members":{"$in":["ben"]}},"sort":[{"field":"last_message_at","direction":-1}],"limit":10}"#
            let byPost = try server.http("POST", "/channels?\(Self.key)", body: query, headers: Self.user("ben"))
            let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let byGet = try server.http("GET", "/channels?payload=\(encoded)&\(Self.key)", headers: Self.user("ben"))
            #expect(byGet.status == 200 && byPost.status == 200, "\(byGet.body)")
            func withoutDuration(_ body: String) -> String { body.replacingOccurrences(of: #","duration":"[^"]*""#, with: "", options: .regularExpression) }
            #expect(withoutDuration(byGet.body) == withoutDuration(byPost.body))
            #expect(try server.http("GET", "/channels?\(Self.key)", headers: Self.user("ben")).status == 400)
            #expect(try server.http("GET", "/channels?payload=%5B1%5D&\(Self.key)", headers: Self.user("ben")).status == 400)
            #expect(try server.http("GET", "/channels?payload=%7B&\(Self.key)", headers: Self.user("ben")).status == 400)
        }

        @Test func requestBodyLimitIsConfigurable() async throws {
            let server = try await TestServer.start { $0.maxRequestBodyBytes = 1_000 }
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["ann", "ben"])
            let small = try server.http("POST", "/channels/messaging/general/message?\(Self.key)",
                                        body: #"{"message":{"text":"\#(String(repeating: "x", count: 900))"}}"#, headers: Self.user("ann"))
            #expect(small.status == 200)
            let large = try server.http("POST", "/channels/messaging/general/message?\(Self.key)",
                                        body: #"{"message":{"text":"\#(String(repeating: "x", count: 1_000))"}}"#, headers: Self.user("ann"))
            #expect(large.status == 413 && large.body.contains(#""code":22"#) && large.body.contains("1000 bytes"))
        }

        /// Regression (nginx answered 502 in the cluster check): the 413 came before the body ended and
        /// the connection closed at once, so a peer still sending got a reset instead of the answer.
        /// Now the rest of the body is read and dropped, then the connection closes.
        @Test func tooLargeBodyIsAnsweredEvenWhileThePeerKeepsSending() async throws {
            let server = try await TestServer.start { $0.maxRequestBodyBytes = 1_000 }
            defer { Task { await server.stop() } }
            let socket = try RawSocket(port: server.port)
            var head = "POST /channels/messaging/general/message?\(Self.key) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(3 << 20)\r\n"
            for (name, value) in Self.user("ann") { head += "\(name): \(value)\r\n" }
            socket.send(head + "\r\n" + String(repeating: "x", count: 64 << 10))
            // The server answers now; the peer, unaware, goes on sending before it reads.
            try await Task.sleep(for: .milliseconds(300))
            let rest = socket.send(String(repeating: "x", count: (3 << 20) - (64 << 10)))
            #expect(rest, "the server read the whole body instead of closing on the sender (a proxy answers 502 then)")
            let response = String(decoding: socket.readAll(), as: UTF8.self)
            #expect(response.hasPrefix("HTTP/1.1 413"), "got: \(response.prefix(80))")
            #expect(response.contains(#""code":22"#))
        }

        @Test func privacyPatchedOverRESTTakesEffectForTheNextSocketEvent() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["ann", "ben"])
            let ann = try await server.connect("ann")
            _ = try await ann.watch(TestServer.general)
            _ = try await server.run(.sendMessage(cid: TestServer.general, userID: "ann", draft: MessageDraft(text: "1")))
            let off = try server.http("PATCH", "/users?\(Self.key)", body: #"{"users":[{"id":"ben","set":{"privacy_settings":{"read_receipts":{"enabled":false}}}}]}"#,
                                      headers: Self.user("ben"))
            #expect(off.status == 200 && off.body.contains(#""read_receipts":{"enabled":false}"#))
            let read = try server.http("POST", "/channels/messaging/general/read?\(Self.key)", headers: Self.user("ben"))
            #expect(read.status == 200)
            #expect(await ann.drain().filter { $0.type == "message.read" }.isEmpty)
            ann.close()
        }

        @Test func restQueryWithConnectionIDMakesThatConnectionWatch() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["ann", "ben"])
            let ben = try await server.connect("ben")
            let watch = try server.http("POST", "/channels/messaging/general/query?\(Self.key)&connection_id=\(ben.connectionID)",
                                        body: #"{"watch":true}"#, headers: Self.user("ben"))
            #expect(watch.status == 200 && watch.body.contains(#""watcher_count":1"#))
            let sent = try server.http("POST", "/channels/messaging/general/message?\(Self.key)", body: #"{"message":{"text":"hi"}}"#,
                                       headers: Self.user("ann"))
            #expect(sent.status == 200)
            let event = await ben.nextEvent(ofType: ["message.new"], timeout: .seconds(5))
            #expect(event?.json?["message"]?["text"]?.stringValue == "hi")
            // Another user's connection cannot be made to watch.
            let theft = try server.http("POST", "/channels/messaging/general/query?\(Self.key)&connection_id=\(ben.connectionID)",
                                        body: #"{"watch":true}"#, headers: Self.user("ann"))
            #expect(theft.status == 403)
            ben.close()
        }
    }
}
