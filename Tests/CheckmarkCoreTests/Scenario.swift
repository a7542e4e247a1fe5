import CheckmarkCore

/// A transcript driver: commands in at a steadily advancing clock, outcomes out.
struct Scenario {
    var engine = ReceiptsEngine()
    /// Microseconds; advances one second per command.
    var now: Int64 = 1_763_000_000_000_000

    static let general = ChannelCID(type: "messaging", id: "general")

    @discardableResult
    mutating func run(_ command: ReceiptsCommand) throws -> ReceiptsOutcome {
        now += 1_000_000
        return try engine.apply(command, at: Timestamp(rawValue: now)).get()
    }

    /// Applies a command that must be refused, returning the error.
    mutating func refuse(_ command: ReceiptsCommand) -> ReceiptsError? {
        now += 1_000_000
        if case .failure(let error) = engine.apply(command, at: Timestamp(rawValue: now)) { return error }
        return nil
    }

    mutating func users(_ ids: String..., privacy: PrivacySettings = .init()) throws {
        for id in ids { try run(.upsertUser(User(id: id, name: id.uppercased(), privacy: privacy))) }
    }

    mutating func channel(_ cid: ChannelCID = general, members: [String]) throws {
        try run(.createChannel(cid: cid, createdBy: members.first, members: members))
    }

    /// Opens connection `connection` for `user`, watching `channels`.
    mutating func connect(_ connection: String, as user: String, watching channels: [ChannelCID] = [general]) throws {
        try run(.connect(connectionID: connection, userID: user))
        for cid in channels { try run(.watch(connectionID: connection, cid: cid)) }
    }

    @discardableResult
    mutating func send(_ user: String, _ id: String, in cid: ChannelCID = general, parent: String? = nil,
                       showInChannel: Bool = false, silent: Bool = false, kind: Message.Kind = .regular) throws -> ReceiptsOutcome {
        try run(.sendMessage(cid: cid, userID: user, draft: MessageDraft(
            id: id, text: "text of \(id)", kind: kind, parentID: parent, showInChannel: showInChannel, silent: silent)))
    }

    func read(_ user: String, in cid: ChannelCID = general) -> ReadState {
        engine.channels[cid]!.members[user]!.read
    }

    func message(_ id: String, in cid: ChannelCID = general) -> Message {
        let channel = engine.channels[cid]!
        return channel.messages[channel.messageIndex[id]!]
    }
}

extension ReceiptsOutcome {
    /// Events of one type.
    func events(_ type: String) -> [ReceiptsEvent] { events.filter { $0.type == type } }

    /// The connections that receive events of one type.
    func receivers(_ type: String) -> [String] { events(type).flatMap { $0.recipients.map(\.connectionID) } }
}
