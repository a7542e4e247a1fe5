import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import Foundation
import NIOCore
import Testing

/// Issue 44: a restarted server leaves every channel in storage (dormant) and loads each when a
/// command or a query first needs it. Clients see no difference: the same unread counts at connect,
/// the same channel lists and states, and commands on a channel not loaded yet answer as before.
@Suite("Dormant start: channels load on first use")
struct DormantStartTests {
    static let general = TestServer.general
    static let team = ChannelCID(type: "messaging", id: "team")
    static let quiet = ChannelCID(type: "messaging", id: "quiet")
    static let auth = ["Authorization": TestServer.serverToken, "stream-auth-type": "jwt"]

    /// Three channels with messages, a thread, and members at different read positions.
    static func fill(_ server: TestServer) async throws {
        try await server.setUp(users: ["ann", "ben", "cat"])
        try await server.run(.createChannel(cid: team, createdBy: "ann", members: ["ann", "ben"]))
        try await server.run(.createChannel(cid: quiet, createdBy: "cat", members: ["cat", "ann"]))
        for i in 1...6 {
            try await server.run(.sendMessage(cid: general, userID: i % 2 == 0 ? "ann" : "ben", draft: MessageDraft(id: "g\(i)", text: "general \(i)")))
        }
        try await server.run(.sendMessage(cid: general, userID: "cat", draft: MessageDraft(id: "r1", text: "reply", parentID: "g1")))
        try await server.run(.sendMessage(cid: team, userID: "ben", draft: MessageDraft(id: "t1", text: "team")))
        try await server.run(.sendMessage(cid: quiet, userID: "cat", draft: MessageDraft(id: "q1", text: "quiet")))
        try await server.run(.markRead(cid: general, userID: "ann", messageID: "g3"))
    }

    /// What clients are told, `duration` (the time taken) left out.
    static func answers(_ server: TestServer) throws -> [String] {
        var answers: [String] = []
        for (method, path, body) in [
            ("POST", "/channels", #"{"user_id":"ann","filter_conditions":{"members":{"$in":["ann"]}},"sort":[{"field":"last_message_at","direction":-1}],"limit":2}"#),
            ("GET", "/unread?user_id=ann", ""),
            ("GET", "/unread?user_id=ben", ""),
            ("GET", "/messages/g1/replies?limit=10", ""),
            ("POST", "/channels/messaging/team/query", #"{"user_id":"ben","messages":{"limit":5}}"#),
        ] {
            let separator = path.contains("?") ? "&" : "?"
            let answer = try server.http(method, path + separator + "api_key=\(TestServer.apiKey)", body: body, headers: auth)
            #expect(answer.status == 200 || answer.status == 201, "\(path): \(answer.body)")
            answers.append(answer.body.replacingOccurrences(of: #","duration":"[^"]*""#, with: "", options: .regularExpression))
        }
        return answers
    }

    static func residency(_ server: TestServer) async throws -> (loaded: [ChannelCID], dormant: [ChannelCID]) {
        try await server.server.service.read { engine in (engine.channels.keys.sorted(), engine.dormantChannels.keys.sorted()) }.get()
    }

    @Test func aRestartedServerAnswersAsBeforeAndLoadsOnlyWhatIsAskedFor() async throws {
        let directory = NSTemporaryDirectory() + "checkmark-dormant-" + UUID().uuidString
        let first = try await TestServer.start(directory: directory)
        try await Self.fill(first)
        // Ben stays connected while the answers are taken, on both servers (it shows as online).
        let ben = try await first.connect("ben")
        let expectedMe = ben.me
        let expected = try Self.answers(first)
        ben.close()
        await first.stop(removingData: false)

        let server = try await TestServer.start(directory: directory)
        defer { Task { await server.stop() } }
        #expect(try await Self.residency(server) == ([], [Self.general, Self.quiet, Self.team]))
        // Connecting tells the totals over every channel, none of them loaded.
        let again = try await server.connect("ben")
        for field in ["total_unread_count", "unread_channels", "unread_threads"] {
            #expect(again.me[field] != nil && again.me[field] == expectedMe[field], "\(field)")
        }
        #expect(try await Self.residency(server).loaded.isEmpty)
        // Listing channels sorts dormant ones as they are, and loads only the page's (two of ann's three,
        // newest first: quiet and team).
        let page = try server.http("POST", "/channels?api_key=\(TestServer.apiKey)", body: #"{"user_id":"ann","sort":[{"field":"last_message_at","direction":-1}],"limit":2}"#, headers: Self.auth)
        #expect(page.status == 200 || page.status == 201)
        #expect(try await Self.residency(server) == ([Self.quiet, Self.team], [Self.general]))
        // Every answer as before the restart.
        let answers = try Self.answers(server)
        for (index, answer) in answers.enumerated() { #expect(answer == expected[index], "answer \(index)") }

        // A command on a dormant channel: applied once it is loaded, told to watchers as always.
        let cat = try await server.connect("cat")
        _ = try await cat.watch(Self.quiet)
        let ann = try await server.connect("ann")
        _ = try await ann.sendMessage(Self.quiet, text: "back again", id: "q2")
        guard case .event(_, let json)? = await cat.nextEvent(ofType: ["message.new"]) else {
            Issue.record("no message.new")
            return
        }
        #expect(json["message"]?["id"]?.stringValue == "q2")
        cat.close()
        ann.close()
        again.close()
    }

    /// Regression: a thread read on a dormant channel whose parent is older than the message window
    /// needs the channel loaded and then the parent's text (the thread's title) read back.
    @Test func aThreadReadOfAnOldParentOnADormantChannelLoadsItThenReadsTheTitle() async throws {
        let directory = NSTemporaryDirectory() + "checkmark-dormant-thread-" + UUID().uuidString
        let first = try await TestServer.start(directory: directory) { $0.messageWindow = 3 }
        try await first.setUp(users: ["ann", "ben"])
        try await first.run(.sendMessage(cid: Self.general, userID: "ann", draft: MessageDraft(id: "p", text: "the parent")))
        try await first.run(.sendMessage(cid: Self.general, userID: "ben", draft: MessageDraft(id: "r1", text: "reply", parentID: "p")))
        for i in 1...6 { try await first.run(.sendMessage(cid: Self.general, userID: "ben", draft: MessageDraft(id: "m\(i)", text: "text \(i)"))) }
        await first.stop(removingData: false)

        let server = try await TestServer.start(directory: directory) { $0.messageWindow = 3 }
        defer { Task { await server.stop() } }
        #expect(try await Self.residency(server).dormant == [Self.general])
        let outcome = try await server.run(.markThreadRead(cid: Self.general, userID: "ann", parentID: "p"))
        #expect(outcome.changed)
    }

    @Test func aCommandOnADormantChannelKeepsItsPlaceAmongThoseThatCameAfter() async throws {
        let directory = NSTemporaryDirectory() + "checkmark-dormant-order-" + UUID().uuidString
        let first = try await TestServer.start(directory: directory)
        try await Self.fill(first)
        await first.stop(removingData: false)

        let server = try await TestServer.start(directory: directory)
        defer { Task { await server.stop() } }
        // Submitted at once, without waiting: the send needs `team` loaded, the mark read after it
        // (of the message the send makes) must see it.
        let send = server.server.service.submit(.sendMessage(cid: Self.team, userID: "ann", draft: MessageDraft(id: "t2", text: "next")))
        let read = server.server.service.submit(.markRead(cid: Self.team, userID: "ben", messageID: "t2"))
        _ = try await send.get()
        _ = try await read.get()
        let unread = try await server.server.service.read { engine in try engine.channel(Self.team).members["ben"]?.read.unreadMessages }.get()
        #expect(unread == 0)
    }

    /// Regression: a thread's replies asked for without `?cid=` loaded every channel the caller may read
    /// (every channel, for a server token) to find the parent; storage now says which channel holds it.
    @Test func repliesLoadOnlyTheChannelHoldingTheParent() async throws {
        let directory = NSTemporaryDirectory() + "checkmark-dormant-replies-" + UUID().uuidString
        let first = try await TestServer.start(directory: directory)
        try await Self.fill(first)
        let expected = try first.http("GET", "/messages/g1/replies?api_key=\(TestServer.apiKey)", headers: Self.auth)
        await first.stop(removingData: false)

        let server = try await TestServer.start(directory: directory)
        defer { Task { await server.stop() } }
        let answer = try server.http("GET", "/messages/g1/replies?api_key=\(TestServer.apiKey)", headers: Self.auth)
        #expect(answer.status == 200 && answer.body.replacingOccurrences(of: #","duration":"[^"]*""#, with: "", options: .regularExpression)
            == expected.body.replacingOccurrences(of: #","duration":"[^"]*""#, with: "", options: .regularExpression))
        #expect(try await Self.residency(server) == ([Self.general], [Self.quiet, Self.team]))
        // A user's: looked for among its channels only; an id no channel holds loads nothing.
        let user = ["Authorization": TestServer.token("ann"), "stream-auth-type": "jwt"]
        #expect(try server.http("GET", "/messages/q1/replies?api_key=\(TestServer.apiKey)", headers: user).status == 200)
        #expect(try await Self.residency(server) == ([Self.general, Self.quiet], [Self.team]))
        #expect(try server.http("GET", "/messages/nothing/replies?api_key=\(TestServer.apiKey)", headers: user).status == 404)
        #expect(try await Self.residency(server) == ([Self.general, Self.quiet], [Self.team]))
        // Naming a channel the caller is not a member of: 404 as for any message it cannot see, and
        // the channel stays in storage (cat is not in team, which holds t1).
        let cat = ["Authorization": TestServer.token("cat"), "stream-auth-type": "jwt"]
        #expect(try server.http("GET", "/messages/t1/replies?cid=messaging:team&api_key=\(TestServer.apiKey)", headers: cat).status == 404)
        #expect(try await Self.residency(server) == ([Self.general, Self.quiet], [Self.team]))
        #expect(try server.http("GET", "/messages/t1/replies?cid=messaging:team&api_key=\(TestServer.apiKey)", headers: user).status == 200)
        #expect(try await Self.residency(server).loaded == [Self.general, Self.quiet, Self.team])
    }
}
