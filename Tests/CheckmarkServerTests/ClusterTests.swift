import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import CheckmarkStorage
import CheckmarkWire
import Foundation
import Logging
import NIOCore
import Testing

extension EndToEnd {
    /// Issue 10: nodes sharing one PostgreSQL database behave as one server. Runs when
    /// `CHECKMARK_TEST_POSTGRES_URL` names a server (`.ci/run` starts one); each test uses a schema of
    /// its own.
    @Suite("Cluster: three nodes on one PostgreSQL database", .serialized,
           .enabled(if: ProcessInfo.processInfo.environment["CHECKMARK_TEST_POSTGRES_URL"]?.isEmpty == false))
    struct ClusterTests {
        static let general = TestServer.general

        /// Three real servers on 127.0.0.1 sharing a fresh schema.
        static func startCluster(nodes: Int = 3, peerLinks: Bool = false) async throws -> (url: String, nodes: [TestServer]) {
            let base = ProcessInfo.processInfo.environment["CHECKMARK_TEST_POSTGRES_URL"]!
            let schema = "cluster_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
            let url = base + (base.contains("?") ? "&" : "?") + "schema=" + schema
            var servers: [TestServer] = []
            for _ in 0..<nodes { servers.append(try await startNode(url, peerLink: peerLinks)) }
            return (url, servers)
        }

        static func startNode(_ url: String, peerLink: Bool = false) async throws -> TestServer {
            try await TestServer.start {
                $0.postgresURL = url
                if peerLink { $0.peerLink = "127.0.0.1:0" }
            }
        }

        /// Stops the nodes, then drops the cluster's schema (at `url`) with everything in it.
        static func stopAll(_ nodes: [TestServer], dropping url: String) async {
            for node in nodes { await node.stop() }
            guard let location = try? PostgresLocation(url: url) else { return }
            try? PostgresStore.dropSchema(of: location, logger: Logger(label: "test"))
        }

        static func channelSeq(_ event: ChatEvent?) -> Int? { event?.json?["channel_seq"]?.intValue }

        @Test func clientsOnDifferentNodesReceiveEachOthersEvents() async throws {
            let (url, nodes) = try await Self.startCluster()
            defer { Task { await Self.stopAll(nodes, dropping: url) } }
            try await nodes[0].setUp(users: ["alice", "bob", "carol"])
            let alice = try await nodes[0].connect("alice")
            let bob = try await nodes[1].connect("bob")
            let carol = try await nodes[2].connect("carol")
            for connection in [alice, bob, carol] { _ = try await connection.watch(Self.general) }

            _ = try await alice.sendMessage(Self.general, text: "hello", id: "m1")
            let atBob = await bob.nextEvent(ofType: ["message.new"])
            let atCarol = await carol.nextEvent(ofType: ["message.new"])
            #expect(atBob?.json?["message"]?["id"]?.stringValue == "m1")
            #expect(atCarol?.json?["message"]?["id"]?.stringValue == "m1")
            #expect(Self.channelSeq(atBob) != nil && Self.channelSeq(atBob) == Self.channelSeq(atCarol))
            #expect(atBob?.json?["unread_count"]?.intValue == 1, "counts are computed on bob's node")

            try await bob.markRead(Self.general, messageID: "m1")
            let read = await alice.nextEvent(ofType: ["message.read"])
            #expect(read?.json?["user"]?["id"]?.stringValue == "bob")
            let readAtCarol = await carol.nextEvent(ofType: ["message.read"])
            #expect(Self.channelSeq(readAtCarol) == Self.channelSeq(read))
            let own = await bob.nextEvent(ofType: ["notification.mark_read"])
            #expect(own?.json?["total_unread_count"]?.intValue == 0)
        }

        /// Regression: a node holding a member's non-watching connection made one event more per message
        /// than a node without, so the nodes' event sequences collided and commits failed.
        /// Rules M1-M6 and R1-R5 across nodes: an edit, a delete and reactions asked of any node are
        /// applied by the channel's owner, reach every node's watchers with the same sequence, and
        /// every node answers queries with them.
        @Test func editsDeletesAndReactionsAskedOfAnyNodeReachEveryNode() async throws {
            let (url, nodes) = try await Self.startCluster()
            defer { Task { await Self.stopAll(nodes, dropping: url) } }
            try await nodes[0].setUp(users: ["alice", "bob", "carol"])
            let bob = try await nodes[1].connect("bob")
            let carol = try await nodes[2].connect("carol")
            for connection in [bob, carol] { _ = try await connection.watch(Self.general) }
            try await nodes[0].run(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "m1", text: "hello")))
            try await nodes[0].run(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "m2", text: "bye")))
            let key = "api_key=\(TestServer.apiKey)"
            let alice = ["Authorization": TestServer.token("alice")], bobToken = ["Authorization": TestServer.token("bob")]
            let calls: [(TestServer, String, String, String, [String: String], Int)] = [
                (nodes[0], "POST", "/messages/m1", #"{"message":{"text":"hello, edited"}}"#, alice, 200),
                (nodes[1], "POST", "/messages/m1/reaction", #"{"reaction":{"type":"like"}}"#, bobToken, 201),
                (nodes[2], "DELETE", "/messages/m2", "", alice, 200),
                (nodes[0], "POST", "/messages/m1/reaction", #"{"reaction":{"type":"love"},"enforce_unique":true}"#, bobToken, 201),
            ]
            for (node, method, path, body, headers, status) in calls {
                let answer = try node.http(method, "\(path)?\(key)", body: body, headers: headers)
                #expect(answer.status == status, "\(method) \(path): \(answer.body)")
            }
            let types: Set<String> = ["message.updated", "message.deleted", "reaction.new", "reaction.updated"]
            var seen: [[String]] = []
            for connection in [bob, carol] {
                var got: [String] = []
                while got.count < 4, let event = await connection.nextEvent(ofType: types) {
                    got.append("\(event.type)@\(Self.channelSeq(event) ?? -1)")
                }
                seen.append(got)
            }
            #expect(seen[0].map { $0.split(separator: "@")[0] } == ["message.updated", "reaction.new", "message.deleted", "reaction.updated"])
            #expect(seen[0] == seen[1], "the same events with the same sequences on both nodes")
            for node in nodes {
                let state = try JSONParser.parse(Array(try node.http("POST", "/channels/messaging/general/query?\(key)", headers: bobToken).body.utf8))
                let messages = state["messages"]?.arrayValue ?? []
                #expect(messages.map { $0["text"]?.stringValue ?? "?" } == ["hello, edited", "bye"])
                #expect(messages.map { $0["type"]?.stringValue ?? "?" } == ["regular", "deleted"])
                #expect(messages.first?["own_reactions"]?.arrayValue?.map { $0["type"]?.stringValue ?? "?" } == ["love"])
            }
            // Regression (review): an answer too large for a peer message (a 5,000-byte text) was made
            // by the asking node from the owner's bare result: no text, no reactions. Every node's
            // answer is the message as it is, whichever node owns the channel.
            let long = String(repeating: "x", count: 5_000)
            try await nodes[0].run(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "long", text: long)))
            for (index, node) in nodes.enumerated() {
                let answer = try node.http("POST", "/messages/long/reaction?\(key)", body: #"{"reaction":{"type":"t\#(index)"}}"#, headers: bobToken)
                #expect(answer.status == 201, "node \(index): \(answer.body.prefix(200))")
                let message = try JSONParser.parse(Array(answer.body.utf8))["message"]
                #expect(message?["text"]?.stringValue?.count == long.count, "node \(index)")
                #expect(message?["reaction_counts"]?["t\(index)"]?.intValue == 1, "node \(index)")
            }
        }

        @Test func nodesHoldingDifferentConnectionsNumberEventsAlike() async throws {
            let (url, nodes) = try await Self.startCluster(nodes: 2)
            defer { Task { await Self.stopAll(nodes, dropping: url) } }
            try await nodes[0].setUp(users: ["alice", "bob"])
            let idle = try await nodes[0].connect("alice")  // connected, not watching
            let bob = try await nodes[1].connect("bob")
            _ = try await bob.watch(Self.general)
            for round in 0..<5 {
                try await nodes[round % 2].run(.sendMessage(cid: Self.general, userID: "bob", draft: MessageDraft(id: "m\(round)", text: "x")))
            }
            #expect(await idle.nextEvent(ofType: ["notification.message_new"]) != nil)
            for node in nodes { #expect(node.server.service.isReady) }
            let seqs = await bob.drain().filter { $0.type == "message.new" }.compactMap { Self.channelSeq($0) }
            #expect(seqs == [1, 3, 5, 7, 9])
        }

        /// `watcher_count` counts the distinct users watching on any node, and stops counting a node's
        /// watchers once the node is gone.
        @Test func watcherCountCountsEveryNodesWatchers() async throws {
            let (url, nodes) = try await Self.startCluster()
            try await nodes[0].setUp(users: ["alice", "bob", "carol"])
            let alice = try await nodes[0].connect("alice")
            let aliceAgain = try await nodes[2].connect("alice")
            let bob = try await nodes[1].connect("bob")
            for connection in [alice, aliceAgain, bob] { _ = try await connection.watch(Self.general) }
            let carolElsewhere = try await nodes[2].connect("carol")  // a member's connection that does not watch
            try await nodes[2].run(.sendMessage(cid: Self.general, userID: "carol", draft: MessageDraft(id: "m1", text: "x")))
            #expect(await alice.nextEvent(ofType: ["message.new"])?.json?["watcher_count"]?.intValue == 2)
            #expect(await bob.nextEvent(ofType: ["message.new"])?.json?["watcher_count"]?.intValue == 2)
            // Regression (issue 43's CI run): notification.message_new counted only its own node's watchers.
            #expect(await carolElsewhere.nextEvent(ofType: ["notification.message_new"])?.json?["watcher_count"]?.intValue == 2)
            let state = try nodes[2].http("POST", "/channels/messaging/general/query?api_key=\(TestServer.apiKey)", body: #"{"user_id":"carol"}"#,
                                          headers: ["Authorization": TestServer.serverToken, "stream-auth-type": "jwt"])
            #expect(state.body.contains(#""watcher_count":2"#))
            // Node 1 goes away without a word (its process would be killed): after the silence limit
            // bob no longer counts.
            await nodes[1].stop()
            try await Task.sleep(for: .seconds(4))
            try await nodes[0].run(.sendMessage(cid: Self.general, userID: "carol", draft: MessageDraft(id: "m2", text: "x")))
            #expect(await alice.nextEvent(ofType: ["message.new"])?.json?["watcher_count"]?.intValue == 1)
            await Self.stopAll([nodes[0], nodes[2]], dropping: url)
        }

        /// Typing and custom events reach the watchers on every node (over NOTIFY, and over direct
        /// links), typing never the sender's own connections, and a closed connection's stop too.
        @Test(arguments: [false, true])
        func typingAndCustomEventsReachWatchersOnEveryNode(peerLinks: Bool) async throws {
            let (url, nodes) = try await Self.startCluster(nodes: 2, peerLinks: peerLinks)
            defer { Task { await Self.stopAll(nodes, dropping: url) } }
            try await nodes[0].setUp(users: ["alice", "bob"])
            let alice = try await nodes[0].connect("alice")
            let bob = try await nodes[1].connect("bob")
            let bobElsewhere = try await nodes[0].connect("bob")
            for connection in [alice, bob, bobElsewhere] { _ = try await connection.watch(Self.general) }
            try await Task.sleep(for: .milliseconds(peerLinks ? 1500 : 300))  // presence, and the links, settle
            let path = "/channels/messaging/general/event?api_key=\(TestServer.apiKey)&connection_id=\(bob.connectionID)"
            let headers = ["Authorization": TestServer.token("bob")]
            let start = try nodes[1].http("POST", path, body: #"{"event":{"type":"typing.start"}}"#, headers: headers)
            #expect(start.status == 201, "\(start.body)")
            #expect(await alice.nextEvent(ofType: ["typing.start"])?.json?["user"]?["id"]?.stringValue == "bob", "across nodes")
            let custom = try nodes[1].http("POST", path, body: #"{"event":{"type":"ping"}}"#, headers: headers)
            #expect(custom.status == 201)
            #expect(await alice.nextEvent(ofType: ["ping"]) != nil)
            #expect(await bobElsewhere.nextEvent(ofType: ["ping"]) != nil, "custom events reach the sender's connections too")
            bob.close()
            #expect(await alice.nextEvent(ofType: ["typing.stop"])?.json?["user"]?["id"]?.stringValue == "bob",
                    "the closed connection's stop reaches the other node")
            #expect(await bobElsewhere.drain().filter { $0.type.hasPrefix("typing.") }.isEmpty,
                    "typing never reaches the sender's own connections, on any node")
        }

        /// A REST call naming a connection another node holds: that node applies it (or refuses it).
        @Test func watchNamingAConnectionOnAnotherNodeTakesEffectThere() async throws {
            let (url, nodes) = try await Self.startCluster(nodes: 2)
            defer { Task { await Self.stopAll(nodes, dropping: url) } }
            try await nodes[0].setUp(users: ["alice", "bob"])
            try await nodes[0].run(.upsertUser(User(id: "mallory")))
            let bob = try await nodes[1].connect("bob")
            let connectionID = bob.connectionID
            try await nodes[0].run(.watch(connectionID: connectionID, cid: Self.general))
            try await nodes[0].run(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "m1", text: "hi")))
            let event = await bob.nextEvent(ofType: ["message.new"])
            #expect(event?.json?["message"]?["id"]?.stringValue == "m1")
            // The holder's refusal comes back as it is; a connection nobody holds is unknown.
            let other = ChannelCID(type: "messaging", id: "other")
            try await nodes[0].run(.createChannel(cid: other, createdBy: "mallory", members: ["mallory"]))
            await #expect(throws: ServiceError.self) { try await nodes[0].run(.watch(connectionID: connectionID, cid: other)) }
            do {
                try await nodes[0].run(.watch(connectionID: connectionID, cid: other))
            } catch ServiceError.rejected(let error) {
                #expect(error == .notAMember(user: "bob", cid: other))
            }
            do {
                try await nodes[0].run(.watch(connectionID: "nobody-has-this", cid: Self.general))
                Issue.record("watch of an unknown connection succeeded")
            } catch ServiceError.rejected(let error) {
                #expect(error == .unknownConnection("nobody-has-this"))
            }
        }

        /// Read-your-writes across nodes: what a client changed through one node, the next request on
        /// another node sees, without waiting for a notification.
        @Test func aChangeMadeOnOneNodeIsSeenAtOnceOnAnother() async throws {
            let (url, nodes) = try await Self.startCluster(nodes: 2)
            defer { Task { await Self.stopAll(nodes, dropping: url) } }
            for round in 0..<20 {
                let cid = ChannelCID(type: "messaging", id: "room\(round)")
                try await nodes[0].run(.upsertUser(User(id: "u\(round)")))
                try await nodes[0].run(.createChannel(cid: cid, createdBy: "u\(round)", members: ["u\(round)"]))
                let connection = try await nodes[1].connect("u\(round)")
                _ = try await connection.watch(cid)
                connection.close()
            }
        }

        /// Concurrent confirmations of one channel from three nodes: pointers only move forward, counts
        /// stay exact, and every node ends with the same state and one gap-free channel sequence.
        @Test func concurrentConfirmationsFromThreeNodesKeepEveryRule() async throws {
            let (url, nodes) = try await Self.startCluster()
            let users = (0..<6).map { "user\($0)" }
            try await nodes[0].setUp(users: users)
            let watcher = try await nodes[2].connect("user0")
            _ = try await watcher.watch(Self.general)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, user) in users.enumerated() {
                    let node = nodes[index % 3]
                    group.addTask {
                        for round in 0..<15 {
                            _ = try await node.run(.sendMessage(cid: Self.general, userID: user, draft: MessageDraft(id: "\(user)-\(round)", text: "x")))
                            _ = try await node.run(.markRead(cid: Self.general, userID: users[(index + 1) % users.count], messageID: nil))
                            _ = try await node.run(.markDelivered(userID: users[(index + 2) % users.count], latest: [DeliveredTarget(cid: Self.general, messageID: "\(user)-\(round)")]))
                        }
                    }
                }
                try await group.waitForAll()
            }
            // Every node answers alike once it has caught up (a query waits for the journal's head).
            var answers: [String] = []
            for node in nodes {
                answers.append(try await node.server.service.read { engine in
                    let states = try engine.readStates(of: Self.general, viewer: "user0")
                    return states.map { "\($0)" }.joined(separator: "\n") + "\n" + users.map { "\(engine.counts(for: $0))" }.joined(separator: ",")
                }.get())
            }
            #expect(answers[0] == answers[1] && answers[1] == answers[2])
            // The journal holds one gap-free channel sequence, and the watcher got exactly its share of it.
            let store = try PostgresStore(location: try PostgresLocation(url: url), logger: Logger(label: "test"))
            let journal = try store.channelEvents(Self.general, after: 0, through: .max)
            store.close()
            #expect(journal.compactMap(\.channelSeq) == Array(1...Int64(journal.count)))
            let expected = journal.filter { $0.audience?.reachesWatcher("user0") == true }.compactMap(\.channelSeq)
            let events = await watcher.drain(for: .milliseconds(700))
            #expect(events.compactMap { Self.channelSeq($0) }.map(Int64.init) == expected)
            // A node started now loads exactly the same state.
            let late = try await Self.startNode(url)
            let lateAnswer = try await late.server.service.read { engine in
                let states = try engine.readStates(of: Self.general, viewer: "user0")
                return states.map { "\($0)" }.joined(separator: "\n") + "\n" + users.map { "\(engine.counts(for: $0))" }.joined(separator: ",")
            }.get()
            #expect(lateAnswer == answers[0])
            await Self.stopAll(nodes + [late], dropping: url)
        }

        /// A node whose database connection is ended by the server refuses the command that finds out
        /// with a storage error (503) within the statement timeout (the client library does not notice
        /// a connection the server ended while it was idle); it then reconnects and reloads
        /// (``ClusterFailureTests``).
        @Test func aNodeThatLosesItsDatabaseRefusesTheCommandThatFindsOut() async throws {
            let (url, nodes) = try await Self.startCluster(nodes: 1)
            defer { Task { await Self.stopAll(nodes, dropping: url) } }
            try await nodes[0].setUp(users: ["alice"])
            let schema = String(url[url.range(of: "schema=")!.upperBound...])
            let psql = Process()
            psql.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            psql.arguments = ["psql", "-q", "-t", ProcessInfo.processInfo.environment["CHECKMARK_TEST_POSTGRES_URL"]!, "-c",
                              "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'checkmark \(schema)'"]
            try psql.run()
            psql.waitUntilExit()
            #expect(psql.terminationStatus == 0)
            await #expect(throws: ServiceError.self) {
                try await nodes[0].run(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(text: "lost?")))
            }
            #expect(try await ClusterFailureTests.eventually(within: 10) { try nodes[0].http("GET", "/readyz").status == 200 })
            try await nodes[0].run(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(text: "back")))
        }

        /// How many shards `node` holds under lease, as its metrics say.
        static func shardsOwned(_ node: TestServer) throws -> Int {
            let line = try node.http("GET", "/metrics").body.split(separator: "\n").first { $0.hasPrefix("checkmark_shards_owned ") }
            return line.flatMap { Double($0.split(separator: " ").last ?? "").map { Int($0) } } ?? -1
        }

        /// Issue 45: the nodes share the 256 shards evenly (at most `ceil(256 / 3)` = 86 each), and the
        /// others take a stopped node's shards within a couple of rounds, not after its leases ran out.
        @Test func theNodesShareTheShardsEvenlyAndTakeAStoppedNodesShare() async throws {
            let (url, nodes) = try await Self.startCluster()
            defer { Task { await Self.stopAll(nodes, dropping: url) } }
            let shared = try await ClusterFailureTests.eventually(within: 15) {
                let owned = try nodes.map(Self.shardsOwned)
                return owned.reduce(0, +) == 256 && owned.allSatisfy { (84...86).contains($0) }
            }
            #expect(shared, "owned: \((try? nodes.map(Self.shardsOwned)) ?? [])")
            await nodes[2].stop()
            let taken = try await ClusterFailureTests.eventually(within: 4) {
                try nodes[0..<2].map(Self.shardsOwned) == [128, 128]
            }
            #expect(taken, "owned: \((try? nodes[0..<2].map(Self.shardsOwned)) ?? [])")
        }

        /// A metric's value on `node` (0 when absent).
        static func metric(_ name: String, of node: TestServer) throws -> Int {
            let line = try node.http("GET", "/metrics").body.split(separator: "\n").first { $0.hasPrefix(name + " ") }
            return line.flatMap { Double($0.split(separator: " ").last ?? "").map { Int($0) } } ?? 0
        }

        /// Issue 45: a channel's commands are applied by the node that owns its shard. A node that
        /// does not forwards them and answers with the owner's answer: the result, or the refusal as
        /// the owner made it.
        @Test func aChannelsCommandsAreAppliedByItsShardsOwner() async throws {
            let (url, nodes) = try await Self.startCluster(nodes: 2)
            defer { Task { await Self.stopAll(nodes, dropping: url) } }
            #expect(try await ClusterFailureTests.eventually(within: 10) { try nodes.map(Self.shardsOwned) == [128, 128] })
            // messaging:general is in shard 92: the first node's (the second took the upper half).
            try await nodes[0].setUp(users: ["alice", "bob", "carol"], members: ["alice", "bob"])
            let alice = try await nodes[0].connect("alice")
            _ = try await alice.watch(Self.general)
            let forwardedBefore = try Self.metric("checkmark_commands_forwarded_total", of: nodes[1])
            let outcome = try await nodes[1].run(.sendMessage(cid: Self.general, userID: "bob", draft: MessageDraft(id: "m1", text: "via the owner")))
            guard case .message(let message) = outcome.result else {
                Issue.record("no message in \(outcome)")
                return
            }
            #expect(message.id == "m1" && message.text == "via the owner" && message.userID == "bob")
            #expect(try Self.metric("checkmark_commands_forwarded_total", of: nodes[1]) == forwardedBefore + 1)
            let atAlice = await alice.nextEvent(ofType: ["message.new"])
            #expect(atAlice?.json?["message"]?["id"]?.stringValue == "m1")
            await #expect {
                try await nodes[1].run(.markRead(cid: Self.general, userID: "carol", messageID: nil))
            } throws: { error in
                guard case ServiceError.rejected(.notAMember(let user, let cid)) = error else { return false }
                return user == "carol" && cid == Self.general
            }
            // Read your writes through the node that forwarded.
            let bob = try await nodes[1].connect("bob")
            let state = try await bob.watch(Self.general)
            #expect(state["messages"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["m1"])
        }

        /// Issue 45: a REST call's command forwarded to its shard's owner is answered with the answer
        /// the owner made from the state its commit left (the message; the reader's read state),
        /// which is what the owner's own state says.
        @Test func aForwardedCommandsRESTAnswerIsTheOwners() async throws {
            let (url, nodes) = try await Self.startCluster(nodes: 2)
            defer { Task { await Self.stopAll(nodes, dropping: url) } }
            #expect(try await ClusterFailureTests.eventually(within: 10) { try nodes.map(Self.shardsOwned) == [128, 128] })
            // messaging:general is in shard 92: the first node's.
            try await nodes[0].setUp(users: ["alice", "bob"], members: ["alice", "bob"])
            let forwardedBefore = try Self.metric("checkmark_commands_forwarded_total", of: nodes[1])
            let service = nodes[1].server.service
            let sent = try JSONParser.parse(try await service.submit(
                .sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "m1", text: "answered by the owner")),
                answer: .message).get())
            #expect(sent["message"]?["id"]?.stringValue == "m1" && sent["message"]?["text"]?.stringValue == "answered by the owner")
            #expect(sent["message"]?["user"]?["id"]?.stringValue == "alice")
            let read = try JSONParser.parse(try await service.submit(
                .markRead(cid: Self.general, userID: "bob", messageID: nil), answer: .readState(cid: Self.general, reader: "bob", thread: nil)).get())
            #expect(read["event"]?["user"]?["id"]?.stringValue == "bob")
            #expect(read["event"]?["last_read_message_id"]?.stringValue == "m1")
            #expect(try Self.metric("checkmark_commands_forwarded_total", of: nodes[1]) == forwardedBefore + 2)
            // A refusal comes back as the owner made it.
            await #expect {
                _ = try await service.submit(.markRead(cid: Self.general, userID: "carol", messageID: nil),
                                             answer: .readState(cid: Self.general, reader: "carol", thread: nil)).get()
            } throws: { error in
                guard case ServiceError.rejected = error else { return false }
                return true
            }
        }

        /// Issue 45: nodes that take peer links forward commands, answer them and announce their
        /// commits over the links once they are open (not through PostgreSQL), with the same answers
        /// and the same events.
        @Test func forwardedCommandsTheirAnswersAndCommitsTravelOverPeerLinks() async throws {
            let (url, nodes) = try await Self.startCluster(nodes: 2, peerLinks: true)
            defer { Task { await Self.stopAll(nodes, dropping: url) } }
            #expect(try await ClusterFailureTests.eventually(within: 10) { try nodes.map(Self.shardsOwned) == [128, 128] })
            // messaging:general is in shard 92: the first node's.
            try await nodes[0].setUp(users: ["alice", "bob"], members: ["alice", "bob"])
            let bob = try await nodes[1].connect("bob")
            _ = try await bob.watch(Self.general)
            let service = nodes[1].server.service
            let forward = "checkmark_peer_link_messages_total{kind=\"forward\"}"
            let forwarded = "checkmark_peer_link_messages_total{kind=\"forwarded\"}"
            let committed = "checkmark_peer_link_messages_total{kind=\"entries\"}"
            // The links open once the nodes heard where the others take them (their `alive`, every second).
            var linked = false
            for round in 0..<100 where !linked {
                _ = try await service.submit(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "early\(round)", text: "x")),
                                             answer: .message).get()
                linked = try Self.metric(forward, of: nodes[0]) > 0 && Self.metric(forwarded, of: nodes[1]) > 0
                    && Self.metric(committed, of: nodes[1]) > 0
                if !linked { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(linked)
            let before = try (Self.metric(forward, of: nodes[0]), Self.metric(forwarded, of: nodes[1]))
            let sent = try JSONParser.parse(try await service.submit(
                .sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "m1", text: "over the link")), answer: .message).get())
            #expect(sent["message"]?["id"]?.stringValue == "m1" && sent["message"]?["text"]?.stringValue == "over the link")
            #expect(try Self.metric(forward, of: nodes[0]) == before.0 + 1, "the command reached its owner over the link")
            #expect(try Self.metric(forwarded, of: nodes[1]) == before.1 + 1, "the answer came back over the link")
            // Bob, on the node that did not commit it, gets the message's event.
            var ids: [String] = []
            while !ids.contains("m1"), let event = await bob.nextEvent(ofType: ["message.new"]) {
                ids.append(event.json?["message"]?["id"]?.stringValue ?? "")
            }
            #expect(ids.last == "m1")
        }

        /// Issue 45: a commit made as a shard's owner after another node took the shard (its epoch
        /// moved on) is refused and stores nothing; the node counts it, loses the shard, reloads and
        /// goes on without a restart.
        @Test func aCommitAsAnOwnerThatLostTheShardIsFencedAndTheNodeGoesOn() async throws {
            let (url, nodes) = try await Self.startCluster(nodes: 1)
            defer { Task { await Self.stopAll(nodes, dropping: url) } }
            let node = nodes[0]
            #expect(try await ClusterFailureTests.eventually(within: 10) { try Self.shardsOwned(node) == 256 })
            try await node.setUp(users: ["alice", "bob"])
            let schema = String(url[url.range(of: "schema=")!.upperBound...])
            // Another node's claim, as the table sees it: the epoch moves on.
            _ = try ClusterFailureTests.psql("UPDATE \"\(schema)\".shards SET epoch = epoch + 1 WHERE shard = 92")
            await #expect(throws: ServiceError.self) {
                try await node.run(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: "fenced", text: "never stored")))
            }
            #expect(try Self.metric("checkmark_fence_rejections_total", of: node) == 1)
            #expect(try ClusterFailureTests.psql("SELECT count(*) FROM \"\(schema)\".messages WHERE id = 'fenced'") == "0")
            #expect(try await ClusterFailureTests.eventually(within: 10) { try node.http("GET", "/readyz").status == 200 }, "reloaded")
            var sent = false
            for _ in 0..<50 where !sent {
                sent = (try? await node.run(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(text: "after")))) != nil
                if !sent { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(sent)
            #expect(try await ClusterFailureTests.eventually(within: 5) {
                try ClusterFailureTests.psql("SELECT epoch FROM \"\(schema)\".shards WHERE shard = 92") == "3" && Self.shardsOwned(node) == 256
            }, "the shard was claimed again, at a new epoch")
        }

        /// Regression (review of 3467b25): a node that takes a channel over refers to channel objects it
        /// stored itself, never to keys it guessed while following another node's commits. Here the
        /// second node restarts between two reads that share an object (its guess would be the second
        /// read's sequence, which nobody stored), then takes the channel when the first node stops:
        /// every read replays whole.
        @Test func aNodeTakingAChannelOverRefersOnlyToChannelObjectsThatAreStored() async throws {
            let (url, started) = try await Self.startCluster(nodes: 2)
            var nodes = started
            defer {
                let all = nodes
                Task { await Self.stopAll(all, dropping: url) }
            }
            #expect(try await ClusterFailureTests.eventually(within: 10) { try nodes.map(Self.shardsOwned) == [128, 128] })
            // messaging:general is in shard 92: the first node's (a joining node takes the upper half).
            try await nodes[0].setUp(users: ["alice", "bob"])
            for id in ["m1", "m2", "m3"] {
                _ = try await nodes[0].run(.sendMessage(cid: Self.general, userID: "alice", draft: MessageDraft(id: id, text: id)))
            }
            _ = try await nodes[0].run(.markRead(cid: Self.general, userID: "bob", messageID: "m1"))
            await nodes[1].stop()
            nodes[1] = try await Self.startNode(url)
            #expect(try await ClusterFailureTests.eventually(within: 10) { try nodes.map(Self.shardsOwned) == [128, 128] })
            _ = try await nodes[0].run(.markRead(cid: Self.general, userID: "bob", messageID: "m2"))
            // The second node has applied it before the first stops.
            _ = try nodes[1].http("GET", "/readyz")
            try await Task.sleep(for: .milliseconds(500))
            await nodes[0].stop()
            #expect(try await ClusterFailureTests.eventually(within: 10) { try Self.shardsOwned(nodes[1]) == 256 })
            var read = false
            for _ in 0..<50 where !read {
                read = (try? await nodes[1].run(.markRead(cid: Self.general, userID: "bob", messageID: "m3"))) != nil
                if !read { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(read)
            let bob = try await nodes[1].connect("bob")
            _ = try await bob.watch(Self.general, lastSeq: 0)
            var replayed: [ChatEvent] = []
            while let event = await bob.nextEvent() {
                replayed.append(event)
                if event.type == "channel.resumed" || event.type == "channel.resume_failed" { break }
            }
            #expect(replayed.last?.type == "channel.resumed", "\(replayed.last?.json.map { "\($0)" } ?? "no end")")
            let reads = replayed.filter { $0.type == "notification.mark_read" }
            #expect(reads.compactMap { $0.json?["last_read_message_id"]?.stringValue } == ["m1", "m2", "m3"])
            #expect(reads.allSatisfy { $0.json?["channel"]?["cid"]?.stringValue == "messaging:general" })
        }

        /// A client that loses its node resumes on another with nothing lost and nothing repeated.
        @Test func resumeOnAnotherNodeAfterLosingOne() async throws {
            let (url, nodes) = try await Self.startCluster()
            defer { Task { await Self.stopAll(nodes, dropping: url) } }
            try await nodes[0].setUp(users: ["alice", "bob"])
            let alice = try await nodes[0].connect("alice")
            _ = try await alice.watch(Self.general)
            var bob = try await nodes[1].connect("bob")
            _ = try await bob.watch(Self.general)
            _ = try await alice.sendMessage(Self.general, text: "one", id: "m1")
            let seen = try #require(Self.channelSeq(await bob.nextEvent(ofType: ["message.new"])))
            bob.close()
            _ = try await alice.sendMessage(Self.general, text: "two", id: "m2")
            _ = try await alice.sendMessage(Self.general, text: "three", id: "m3")
            bob = try await nodes[2].connect("bob")
            _ = try await bob.watch(Self.general, lastSeq: Int64(seen))
            var replayed: [ChatEvent] = []
            var marker: ChatEvent?
            while let event = await bob.nextEvent() {
                if event.type == "channel.resumed" { marker = event; break }
                replayed.append(event)
            }
            #expect(replayed.map(\.type) == ["message.new", "message.new"])
            #expect(replayed.compactMap { $0.json?["message"]?["id"]?.stringValue } == ["m2", "m3"])
            // m1 to m3 each journaled message.new then notification.message_new (which watchers never get).
            #expect(replayed.compactMap { Self.channelSeq($0) } == [seen + 2, seen + 4])
            #expect(Self.channelSeq(marker) == seen + 5)
            _ = try await alice.sendMessage(Self.general, text: "four", id: "m4")
            let live = await bob.nextEvent(ofType: ["message.new"])
            #expect(Self.channelSeq(live) == seen + 6, "no gap and no repeat at the seam")
        }
    }
}
