import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import NIOCore
import Testing

extension EndToEnd {
    /// `POST /channels/{type}/{id}/event` over real sockets: typing and custom events reach the
    /// watchers they should (``ChannelSignals``), are refused with Stream's error shape when they
    /// must be, and a connection that closes while typing sends the stop it owes.
    @Suite("Typing and custom events over REST", .serialized)
    struct ChannelEventsTests {
        static let key = "api_key=\(TestServer.apiKey)"
        static func user(_ id: String) -> [String: String] { ["Authorization": TestServer.token(id)] }
        static let eventPath = "/channels/messaging/general/event?\(key)"

        /// Ann and Ben, members of the general channel, each with a connection watching it, with
        /// nothing pending.
        static func annAndBenWatching(_ server: TestServer) async throws -> (ChatConnection, ChatConnection) {
            try await server.setUp(users: ["ann", "ben"])
            let ann = try await server.connect("ann")
            let ben = try await server.connect("ben")
            try await ann.watch(TestServer.general)
            try await ben.watch(TestServer.general)
            _ = await ann.drain()
            _ = await ben.drain()
            return (ann, ben)
        }

        @Test func typingReachesOtherWatchersAndTheAnswerIsTheEvent() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let (ann, ben) = try await Self.annAndBenWatching(server)

            let answer = try server.http("POST", Self.eventPath + "&connection_id=\(ben.connectionID)",
                                         body: #"{"event":{"type":"typing.start","parent_id":"p1"}}"#, headers: Self.user("ben"))
            #expect(answer.status == 201, "\(answer.body)")
            let json = try JSONParser.parse(Array(answer.body.utf8))
            #expect(json["event"]?["type"]?.stringValue == "typing.start" && json["event"]?["parent_id"]?.stringValue == "p1")
            #expect(json["event"]?["user"]?["id"]?.stringValue == "ben" && json["event"]?["cid"]?.stringValue == "messaging:general")
            #expect(json["duration"]?.stringValue?.hasSuffix("ms") == true)
            let typing = await ann.nextEvent(ofType: ["typing.start"])
            #expect(typing?.json?["user"]?["id"]?.stringValue == "ben" && typing?.json?["parent_id"]?.stringValue == "p1")
            #expect(typing?.json?["custom"]?.objectValue?.isEmpty == true)
            #expect(await ben.drain().isEmpty, "the sender's own connection is not told it types")
        }

        @Test func aConnectionClosedWhileTypingSendsTheStop() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["ann", "ben"])
            let ann = try await server.connect("ann")
            let ben = try await server.connect("ben")
            try await ann.watch(TestServer.general)
            try await ben.watch(TestServer.general)
            let start = try server.http("POST", Self.eventPath + "&connection_id=\(ben.connectionID)",
                                        body: #"{"event":{"type":"typing.start"}}"#, headers: Self.user("ben"))
            #expect(start.status == 201)
            #expect(await ann.nextEvent(ofType: ["typing.start"]) != nil)
            ben.close()
            let stop = await ann.nextEvent(ofType: ["typing.stop"])
            #expect(stop?.json?["user"]?["id"]?.stringValue == "ben", "the closed connection's typing ends for the others")
        }

        @Test func typingIndicatorsOffReachesNobody() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["ann", "ben"], privacy: ["ben": PrivacySettings(typingIndicators: false)])
            let ann = try await server.connect("ann")
            try await ann.watch(TestServer.general)
            _ = await ann.drain()
            let start = try server.http("POST", Self.eventPath, body: #"{"event":{"type":"typing.start"}}"#, headers: Self.user("ben"))
            #expect(start.status == 201)
            #expect(await ann.drain().isEmpty, "ben's typing is private")
            let metrics = try server.http("GET", "/metrics")
            #expect(metrics.body.contains(#"checkmark_typing_suppressed_total{reason="privacy"} 1"#))
        }

        @Test func aCustomEventReachesEveryWatcherWithTheSendersFields() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let (ann, ben) = try await Self.annAndBenWatching(server)
            let sent = try server.http("POST", Self.eventPath,
                                       body: #"{"event":{"type":"friendship_request","text":"hey","custom":{"n":1},"channel_seq":999999,"unread_count":7}}"#,
                                       headers: Self.user("ben"))
            #expect(sent.status == 201, "\(sent.body)")
            for connection in [ann, ben] {
                let event = await connection.nextEvent(ofType: ["friendship_request"])
                #expect(event?.json?["text"]?.stringValue == "hey" && event?.json?["custom"]?["n"]?.intValue == 1)
                #expect(event?.json?["channel_seq"] == nil && event?.json?["unread_count"] == nil,
                        "regression (review): a sender's channel_seq made every watcher's next resume fail")
                #expect(event?.json?["user"]?["id"]?.stringValue == "ben")
            }
        }

        @Test func badEventsAreRefusedWithStreamsErrorShape() async throws {
            let server = try await TestServer.start { $0.maxCustomEventBytes = 200 }
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["ann", "ben", "zed"], members: ["ann", "ben"])
            let cases: [(name: String, body: String, user: String, status: Int, code: Int)] = [
                ("no event", #"{}"#, "ann", 400, 4),
                ("no type", #"{"event":{"text":"x"}}"#, "ann", 400, 4),
                ("reserved type", #"{"event":{"type":"message.new"}}"#, "ann", 400, 4),
                ("parent_id not a string", #"{"event":{"type":"typing.start","parent_id":7}}"#, "ann", 400, 4),
                ("empty parent_id", #"{"event":{"type":"typing.start","parent_id":""}}"#, "ann", 400, 4),
                ("Checkmark's answer type", #"{"event":{"type":"reply","request_id":"resume:messaging:general"}}"#, "ann", 400, 4),
                ("custom event over max_custom_event", #"{"event":{"type":"big","text":""# + String(repeating: "x", count: 300) + #""}}"#,
                 "ann", 400, 4),
                ("not a member", #"{"event":{"type":"typing.start"}}"#, "zed", 403, 17),
            ]
            for item in cases {
                let answer = try server.http("POST", Self.eventPath, body: item.body, headers: Self.user(item.user))
                #expect(answer.status == item.status, "\(item.name): \(answer.body)")
                #expect(answer.body.contains(#""code":\#(item.code)"#), "\(item.name): \(answer.body)")
            }
            _ = try await server.run(.updateChannelType(name: "messaging", readEvents: nil, deliveryEvents: nil, customEvents: false))
            let off = try server.http("POST", Self.eventPath, body: #"{"event":{"type":"ping"}}"#, headers: Self.user("ann"))
            #expect(off.status == 403 && off.body.contains("custom_events"), "\(off.body)")
        }

        /// Regression (review): the bucket was the request's `connection_id`, which a client could
        /// change with every request; it is the user's.
        @Test func eventsPastTheUsersRateAreRefusedWith429WhateverConnectionTheyName() async throws {
            let server = try await TestServer.start {
                $0.channelEventsPerSecond = 1
                $0.channelEventBurst = 3
            }
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["ann", "ben"])
            var statuses: [Int] = []
            for index in 0..<5 {
                statuses.append(try server.http("POST", Self.eventPath + "&connection_id=made-up-\(index)",
                                                body: #"{"event":{"type":"typing.start"}}"#, headers: Self.user("ann")).status)
            }
            #expect(statuses == [201, 201, 201, 429, 429])
            let other = try server.http("POST", Self.eventPath, body: #"{"event":{"type":"typing.start"}}"#, headers: Self.user("ben"))
            #expect(other.status == 201, "another user's bucket is its own")
        }

        @Test func theChannelConfigTellsClientsTypingIsOnAndPrivacyListsIt() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["ann", "ben"])
            let state = try server.http("POST", "/channels/messaging/general/query?\(Self.key)", headers: Self.user("ann"))
            let json = try JSONParser.parse(Array(state.body.utf8))
            #expect(json["channel"]?["config"]?["typing_events"]?.boolValue == true)
            #expect(json["channel"]?["config"]?["custom_events"]?.boolValue == true)
            let capabilities = json["channel"]?["own_capabilities"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(capabilities.contains("send-typing-events") && capabilities.contains("send-custom-events"))
            let ann = try await server.connect("ann")
            #expect(ann.me["privacy_settings"]?["typing_indicators"]?["enabled"]?.boolValue == true)
        }
    }
}
