import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import CheckmarkWebSocket
import NIOCore
import Testing

extension EndToEnd {
    /// The contract's recipients table and rules 6-9, end to end over real sockets: who receives each
    /// event, and who receives nothing (each "nothing" waits out a window in which it would have come).
    @Suite("Gateway: who receives what", .serialized)
    struct GatewayRecipientsTests {
        static let general = TestServer.general

        @Test func messageNewReachesEveryWatcherAndNotificationReachesMembersNotWatching() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob", "carol"], members: ["alice", "bob", "carol"])
            try await server.run(.upsertUser(User(id: "mallory")))
            let alice = try await server.connect("alice")
            let bob = try await server.connect("bob")
            let carol = try await server.connect("carol")   // a member, not watching
            let mallory = try await server.connect("mallory")  // not a member
            try await alice.watch(Self.general)
            try await bob.watch(Self.general)

            let sent = try await alice.sendMessage(Self.general, text: "hi", id: "m1")
            #expect(sent["id"]?.stringValue == "m1")

            let toAlice = await alice.nextEvent(ofType: ["message.new"])
            #expect(toAlice?.json?["message"]?["id"]?.stringValue == "m1", "the sender's own connection gets message.new")
            #expect(toAlice?.json?["unread_count"]?.intValue == 0)
            let toBob = await bob.nextEvent(ofType: ["message.new"])
            #expect(toBob?.json?["user"]?["id"]?.stringValue == "alice")
            #expect(toBob?.json?["watcher_count"]?.intValue == 2)
            #expect(toBob?.json?["unread_count"]?.intValue == 1 && toBob?.json?["unread_channels"]?.intValue == 1)
            let toCarol = await carol.nextEvent(ofType: ["notification.message_new"])
            #expect(toCarol?.json?["channel"]?["cid"]?.stringValue == "messaging:general")
            #expect(toCarol?.json?["total_unread_count"]?.intValue == 1)
            #expect(await carol.drain().isEmpty, "carol gets only the notification, not message.new")
            #expect(await mallory.drain().isEmpty, "a non-member receives nothing")
            #expect(await alice.drain().isEmpty)
            #expect(await bob.drain().isEmpty)
        }

        @Test func onlyMembersMayWatchOrConfirm() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob"])
            let mallory = try await server.connect("mallory", details: [("name", .string("M"))])
            await #expect {
                try await mallory.watch(Self.general)
            } throws: { ($0 as? ChatClientError)?.code == "not_a_member" }
            await #expect {
                try await mallory.markRead(Self.general)
            } throws: { ($0 as? ChatClientError)?.code == "not_a_member" }
            await #expect {
                try await mallory.watch(ChannelCID(type: "messaging", id: "nope"))
            } throws: { ($0 as? ChatClientError)?.code == "unknown_channel" }
        }

        @Test func messageReadReachesWatchersAndMarkReadOnlyTheReadersOwnConnections() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob"])
            let alice = try await server.connect("alice")
            let bobPhone = try await server.connect("bob")
            let bobLaptop = try await server.connect("bob")  // not watching
            try await alice.watch(Self.general)
            try await bobPhone.watch(Self.general)
            try await alice.sendMessage(Self.general, text: "one", id: "m1")
            _ = await alice.drain()
            _ = await bobPhone.drain()
            _ = await bobLaptop.drain()

            try await bobPhone.markRead(Self.general)
            let read = await alice.nextEvent(ofType: ["message.read"])
            #expect(read?.json?["user"]?["id"]?.stringValue == "bob")
            #expect(read?.json?["last_read_message_id"]?.stringValue == "m1")
            #expect(await bobPhone.nextEvent(ofType: ["message.read"]) != nil, "the reader's watching connection sees its read too")
            for connection in [bobPhone, bobLaptop] {
                let mark = await connection.nextEvent(ofType: ["notification.mark_read"])
                #expect(mark?.json?["total_unread_count"]?.intValue == 0 && mark?.json?["unread_channels"]?.intValue == 0)
                #expect(mark?.json?["cid"]?.stringValue == "messaging:general")
            }
            #expect(await alice.drain().isEmpty, "nobody else gets notification.mark_read")
            #expect(await bobLaptop.drain().isEmpty, "a connection not watching gets no message.read")

            // A duplicate confirmation changes nothing and emits nothing (rule 1).
            try await bobPhone.markRead(Self.general)
            #expect(await alice.drain().isEmpty)
            #expect(await bobLaptop.drain().isEmpty)
        }

        @Test func readReceiptsOffKeepReadsFromOthersButNotFromTheReader() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob"], privacy: ["bob": PrivacySettings(readReceipts: false)])
            let alice = try await server.connect("alice")
            let bob = try await server.connect("bob")
            try await alice.watch(Self.general)
            try await bob.watch(Self.general)
            try await alice.sendMessage(Self.general, text: "psst", id: "m1")
            _ = await alice.drain()
            _ = await bob.drain()

            try await bob.markRead(Self.general)
            #expect(await bob.nextEvent(ofType: ["notification.mark_read"]) != nil, "rule 6: own connections still get it")
            #expect(await alice.drain().isEmpty, "rule 6: no message.read about bob reaches alice")
            let state = try await alice.watch(Self.general)
            let bobState = state["read"]?.arrayValue?.first { $0["user"]?["id"]?.stringValue == "bob" }
            #expect(bobState?["last_read"] == nil && bobState?["unread_messages"] == nil, "bob's read state is never shown to others")
            let own = try await bob.watch(Self.general)
            let mine = own["read"]?.arrayValue?.first { $0["user"]?["id"]?.stringValue == "bob" }
            #expect(mine?["last_read_message_id"]?.stringValue == "m1", "bob sees his own")

            // Rule 9: turning receipts back on takes effect for the very next event.
            try await server.run(.updateUser(UserPatch(id: "bob", set: [("privacy_settings", .object([("read_receipts", .object([("enabled", .bool(true))]))]))])))
            try await alice.sendMessage(Self.general, text: "again", id: "m2")
            _ = await alice.drain()
            try await bob.markRead(Self.general)
            #expect(await alice.nextEvent(ofType: ["message.read"])?.json?["last_read_message_id"]?.stringValue == "m2")
        }

        @Test func deliveryFollowsTheChannelTypeAndThePrivacySetting() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let team = ChannelCID(type: "team", id: "core")
            try await server.run(.createChannelType(ChannelType(name: "team", readEvents: true, deliveryEvents: true)))
            try await server.setUp(users: ["alice", "bob", "carol"], privacy: ["carol": PrivacySettings(deliveryReceipts: false)], cid: team)
            try await server.setUp(users: [], cid: Self.general, members: ["alice", "bob"])
            let alice = try await server.connect("alice")
            let bob = try await server.connect("bob")
            let carol = try await server.connect("carol")
            for connection in [alice, bob, carol] { try await connection.watch(team) }
            try await alice.watch(Self.general)
            try await alice.sendMessage(team, text: "t", id: "t1")
            try await alice.sendMessage(Self.general, text: "g", id: "g1")
            for connection in [alice, bob, carol] { _ = await connection.drain() }

            try await bob.markDelivered([(team, "t1"), (Self.general, "g1")])
            let delivered = await alice.nextEvent(ofType: ["message.delivered"])
            #expect(delivered?.cid == team && delivered?.json?["last_delivered_message_id"]?.stringValue == "t1")
            #expect(await alice.drain().isEmpty, "messaging has delivery_events off: no message.delivered for g1 (rule 8)")
            #expect(await bob.drain().map(\.type) == ["message.delivered"], "bob's watching connection sees his own delivery")

            try await carol.markDelivered([(team, "t1")])
            #expect(await carol.nextEvent(ofType: ["message.delivered"]) != nil, "carol's own watching connection sees it")
            #expect(await alice.drain().isEmpty, "rule 7: nobody else does")
            #expect(await bob.drain().isEmpty)

            // The author sees her message's state move from sent to delivered to read.
            var tracker = ReceiptTracker(cid: team, channelState: try await alice.watch(team))
            let message = (try await alice.watch(team))["messages"]?.arrayValue?.last ?? .null
            #expect(tracker.status(of: message)?.state == .delivered)
            #expect(tracker.status(of: message)?.deliveredTo == ["bob"], "carol's delivery is hidden from alice")
            try await bob.markRead(team)
            if let event = await alice.nextEvent(ofType: ["message.read"]) { tracker.apply(event) }
            #expect(tracker.status(of: message)?.state == .read)
            #expect(tracker.status(of: message)?.readBy == ["bob"])
        }

        @Test func readEventsOffSendsNoMessageRead() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let quiet = ChannelCID(type: "quiet", id: "room")
            try await server.run(.createChannelType(ChannelType(name: "quiet", readEvents: false)))
            try await server.setUp(users: ["alice", "bob"], cid: quiet)
            let alice = try await server.connect("alice")
            let bob = try await server.connect("bob")
            try await alice.watch(quiet)
            try await bob.watch(quiet)
            try await alice.sendMessage(quiet, text: "x", id: "q1")
            _ = await alice.drain()
            _ = await bob.drain()
            try await bob.markRead(quiet)
            let bobEvents = await bob.drain()
            #expect(bobEvents.map(\.type) == ["notification.mark_read"], "own counts still work; no message.read at all")
            #expect(await alice.drain().isEmpty)
        }

        @Test func markUnreadReachesOnlyTheActingUsersConnectionsWithItsCounts() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob"])
            let alice = try await server.connect("alice")
            let bob = try await server.connect("bob")
            try await alice.watch(Self.general)
            try await bob.watch(Self.general)
            for index in 1...3 { try await alice.sendMessage(Self.general, text: "\(index)", id: "m\(index)") }
            try await bob.markRead(Self.general)
            _ = await alice.drain()
            _ = await bob.drain()

            try await bob.markUnread(Self.general, messageID: "m2")
            let event = await bob.nextEvent(ofType: ["notification.mark_unread"])
            #expect(event?.json?["first_unread_message_id"]?.stringValue == "m2")
            #expect(event?.json?["last_read_message_id"]?.stringValue == "m1")
            #expect(event?.json?["unread_messages"]?.intValue == 2)
            #expect(event?.json?["total_unread_count"]?.intValue == 2 && event?.json?["unread_channels"]?.intValue == 1)
            #expect(await alice.drain().isEmpty)
        }

        @Test func eventsOfOneChannelArriveInCommitOrderAtEveryReceiver() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let senders = ["s1", "s2", "s3", "s4"]
            try await server.setUp(users: senders + ["r1", "r2"])
            var receivers: [ChatConnection] = []
            for user in ["r1", "r2"] + senders {
                let connection = try await server.connect(user)
                try await connection.watch(Self.general)
                receivers.append(connection)
            }
            let perSender = 40
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, user) in senders.enumerated() {
                    let connection = receivers[2 + index]
                    group.addTask {
                        for n in 0..<perSender {
                            try await connection.sendMessage(Self.general, text: "\(n)", id: "\(user)-\(n)")
                            if n % 5 == 0 { try await connection.markRead(Self.general) }
                        }
                    }
                }
                try await group.waitForAll()
            }
            var sequences: [[String]] = []
            for connection in receivers {
                var ids: [String] = []
                while ids.count < senders.count * perSender, let event = await connection.nextEvent(ofType: ["message.new"]) {
                    if let id = event.json?["message_id"]?.stringValue { ids.append(id) }
                }
                sequences.append(ids)
            }
            #expect(sequences[0].count == senders.count * perSender)
            for sequence in sequences.dropFirst() { #expect(sequence == sequences[0], "every receiver sees one order") }
            // That order is the commit order: the stored channel lists the messages the same way.
            let stored = try await server.server.service.read { engine in let messages = try engine.channel(Self.general).messages; return messages.indices.map { messages.id(at: $0) } }.get()
            #expect(stored == sequences[0])
            for sender in senders {
                let mine = sequences[0].filter { $0.hasPrefix(sender + "-") }
                #expect(mine == (0..<perSender).map { "\(sender)-\($0)" }, "each sender's messages keep their order")
            }
        }

        @Test func markAllReadSendsOneNotificationWithoutChannelFieldsAndCorrectTotals() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let other = ChannelCID(type: "messaging", id: "other")
            try await server.setUp(users: ["alice", "bob"])
            try await server.run(.createChannel(cid: other, createdBy: "alice", members: ["alice", "bob"]))
            let alice = try await server.connect("alice")
            let bob = try await server.connect("bob")
            try await alice.sendMessage(Self.general, text: "1", id: "g1")
            try await alice.sendMessage(other, text: "2", id: "o1")
            try await alice.sendMessage(other, text: "3", id: "o2")
            _ = await bob.drain()
            let own = await alice.drain()
            #expect(own.map(\.type) == Array(repeating: "notification.message_new", count: 3),
                    "the sender's connections that do not watch hear of her messages too (other devices)")
            try await bob.markReadMany()
            let events = await bob.drain()
            #expect(events.map(\.type) == ["notification.mark_read"], "one event for all channels")
            let event = events.first?.json
            #expect(event?["cid"] == nil && event?["channel_id"] == nil, "mark-all-read carries no channel fields")
            #expect(event?["total_unread_count"]?.intValue == 0 && event?["unread_channels"]?.intValue == 0)
            #expect(await alice.drain().isEmpty)
        }

        @Test func channelTypeFlagChangesTakeEffectForTheNextEvent() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob"])
            let alice = try await server.connect("alice")
            let bob = try await server.connect("bob")
            try await alice.watch(Self.general)
            try await bob.watch(Self.general)
            try await alice.sendMessage(Self.general, text: "1", id: "m1")
            _ = await alice.drain()
            _ = await bob.drain()
            // Delivery events are off in messaging: a delivery confirmation is ignored (rule 5, 8).
            try await bob.markDelivered([(Self.general, "m1")])
            #expect(await alice.drain().isEmpty)
            // Rule 9: turned on, the very next confirmation emits.
            let enabled = try server.http("PUT", "/channeltypes/messaging?api_key=\(TestServer.apiKey)",
                                          body: #"{"delivery_events":true,"read_events":false}"#,
                                          headers: ["Authorization": TestServer.serverToken])
            #expect(enabled.status == 200)
            try await alice.sendMessage(Self.general, text: "2", id: "m2")
            _ = await alice.drain()
            _ = await bob.drain()
            try await bob.markDelivered([(Self.general, "m2")])
            #expect(await alice.nextEvent(ofType: ["message.delivered"])?.json?["last_delivered_message_id"]?.stringValue == "m2")
            // And read events, now off, stop.
            try await bob.markRead(Self.general)
            #expect(await alice.drain().isEmpty)
        }

        @Test func compressedAndPlainConnectionsReceiveTheSameEvents() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob", "carol"])
            let alice = try await server.connect("alice")
            let bob = try await ChatConnection.connect(
                host: "127.0.0.1", port: server.port, apiKey: TestServer.apiKey, userID: "bob", token: TestServer.token("bob"),
                compression: PerMessageDeflateConfiguration(), group: TestServer.clientGroup)
            var small = PerMessageDeflateConfiguration()
            small.maxWindowBits = 9
            let carol = try await ChatConnection.connect(
                host: "127.0.0.1", port: server.port, apiKey: TestServer.apiKey, userID: "carol", token: TestServer.token("carol"),
                compression: small, group: TestServer.clientGroup)
            for connection in [alice, bob, carol] { try await connection.watch(Self.general) }
            let text = String(repeating: "✓✓ read receipts compress well. ", count: 100)
            for index in 0..<5 { try await alice.sendMessage(Self.general, text: text, id: "z\(index)") }
            for connection in [alice, bob, carol] {
                var texts: [String] = []
                while texts.count < 5, let event = await connection.nextEvent(ofType: ["message.new"]) {
                    texts.append(event.json?["message"]?["text"]?.stringValue ?? "")
                }
                #expect(texts == Array(repeating: text, count: 5), "\(connection.userID) got every event whole")
            }
        }

        /// Regression: events fanned out while a connection was being registered overtook its first
        /// health.check.
        @Test func healthCheckComesFirstEvenWhileTheChannelIsBusy() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            try await server.setUp(users: ["alice", "bob"])
            let alice = try await server.connect("alice")
            let flood = Task {
                for index in 0..<300 {
                    alice.send(raw: #"{"type":"send_message","cid":"messaging:general","message":{"id":"f\#(index)","text":"x"}}"#)
                    if index % 20 == 0 { try? await Task.sleep(for: .milliseconds(2)) }
                }
            }
            for _ in 0..<15 {
                let bob = try await server.connect("bob")  // throws if anything but health.check comes first
                bob.close()
            }
            await flood.value
        }
    }
}
