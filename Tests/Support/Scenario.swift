import CheckmarkCore

/// A transcript driver of the engine, shared by the core and wire tests: commands in at a steadily
/// advancing clock, outcomes out.
package struct Scenario {
    package init() {}

    package var engine = ReceiptsEngine()
    /// Microseconds; advances one second per command.
    package var now: Int64 = 1_763_000_000_000_000

    package static let general = ChannelCID(type: "messaging", id: "general")

    @discardableResult
    package mutating func run(_ command: ReceiptsCommand) throws -> ReceiptsOutcome {
        now += 1_000_000
        return try engine.apply(command, at: Timestamp(rawValue: now)).get()
    }

    /// Applies a command that must be refused, returning the error.
    package mutating func refuse(_ command: ReceiptsCommand) -> ReceiptsError? {
        now += 1_000_000
        if case .failure(let error) = engine.apply(command, at: Timestamp(rawValue: now)) { return error }
        return nil
    }

    package mutating func users(_ ids: String..., privacy: PrivacySettings = .init()) throws {
        for id in ids { try run(.upsertUser(User(id: id, name: id.uppercased(), privacy: privacy))) }
    }

    package mutating func channel(_ cid: ChannelCID = general, members: [String]) throws {
        try run(.createChannel(cid: cid, createdBy: members.first, members: members))
    }

    /// Opens connection `connection` for `user`, watching `channels`.
    package mutating func connect(_ connection: String, as user: String, watching channels: [ChannelCID] = [general]) throws {
        try run(.connect(connectionID: connection, userID: user))
        for cid in channels { try run(.watch(connectionID: connection, cid: cid)) }
    }

    @discardableResult
    package mutating func send(_ user: String, _ id: String, in cid: ChannelCID = general, parent: String? = nil,
                       showInChannel: Bool = false, silent: Bool = false, kind: Message.Kind = .regular) throws -> ReceiptsOutcome {
        try run(.sendMessage(cid: cid, userID: user, draft: MessageDraft(
            id: id, text: "text of \(id)", kind: kind, parentID: parent, showInChannel: showInChannel, silent: silent)))
    }

    package func read(_ user: String, in cid: ChannelCID = general) -> ReadState {
        engine.channels[cid]!.members[user]!.read
    }

    package func message(_ id: String, in cid: ChannelCID = general) -> Message {
        let channel = engine.channels[cid]!
        return channel.messages[channel.messages.position(of: id)!]
    }
}

extension ReceiptsOutcome {
    /// Events of one type.
    package func events(_ type: String) -> [ReceiptsEvent] { events.filter { $0.type == type } }

    /// The connections that receive events of one type.
    package func receivers(_ type: String) -> [String] { events(type).flatMap { $0.recipients.map(\.connectionID) } }
}
