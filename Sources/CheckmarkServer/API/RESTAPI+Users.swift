import CheckmarkCore
import CheckmarkWire
import NIOCore

/// Users (`POST /users`, `PATCH /users`) and channel types (`/channeltypes`).
extension RESTAPI {
    /// Upsert: `{"users": {id: user}}`; each user replaces the stored one (privacy settings default to
    /// enabled when absent). A user token may upsert only itself.
    func upsertUsers(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        guard let users = call.body["users"]?.objectValue, !users.isEmpty else {
            throw .invalid("users must be a non-empty object of id to user")
        }
        var commands: [ReceiptsCommand] = []
        for (id, value) in users {
            guard case .object(let fields) = value else { throw .invalid("users.\(id) must be an object") }
            if let inner = try RequestFields.optionalString(value, "id"), inner != id {
                throw .invalid("users.\(id) has a different id \(inner)")
            }
            _ = try call.caller.actor(named: id)
            commands.append(.upsertUser(try ResultJSON.user(id: id, details: fields.filter { $0.0 != "id" })))
        }
        // All at once: an upsert cannot be refused by the engine, and the batch shares one commit.
        let futures = commands.map { service.submit($0) }
        return EventLoopFuture.whenAllSucceed(futures, on: service.engineLoop).map(Self.usersObject)
    }

    /// Partial update: `{"users": [{"id", "set": {...}, "unset": [...]}]}`. A user token may update only
    /// itself (this is how clients change their own `privacy_settings`).
    func updateUsersPartial(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        guard let updates = call.body["users"]?.arrayValue, !updates.isEmpty else {
            throw .invalid("users must be a non-empty array of {id, set, unset}")
        }
        let commands = try updates.map { (update) throws(WireError) -> ReceiptsCommand in
            guard let id = update["id"]?.stringValue else { throw .invalid("each partial update needs a string id") }
            _ = try call.caller.actor(named: id)
            var set: [(String, JSONValue)] = []
            if let value = update["set"], value != .null {
                guard let fields = value.objectValue else { throw .invalid("set must be an object") }
                set = fields
            }
            var unset: [String] = []
            if let value = update["unset"], value != .null {
                guard let keys = value.arrayValue?.compactMap(\.stringValue), keys.count == value.arrayValue?.count else {
                    throw .invalid("unset must be an array of field names")
                }
                unset = keys
            }
            if set.isEmpty && unset.isEmpty { throw .invalid("a partial update of \(id) needs set or unset") }
            return .updateUser(UserPatch(id: id, set: set, unset: unset))
        }
        return submitAll(commands).map(Self.usersObject)
    }

    private static func usersObject(_ outcomes: [ReceiptsOutcome]) -> [UInt8] {
        RESTResultJSON.users(outcomes.compactMap { if case .user(let user) = $0.result { user } else { nil } })
    }

    /// Applies commands one after another (a failure stops the rest and answers the error).
    func submitAll(_ commands: [ReceiptsCommand]) -> EventLoopFuture<[ReceiptsOutcome]> {
        let service = self.service
        var future = service.engineLoop.makeSucceededFuture([ReceiptsOutcome]())
        for command in commands {
            future = future.flatMap { done in service.submit(command).map { done + [$0] } }
        }
        return future
    }

    // MARK: Channel types

    /// `{name, read_events?, delivery_events?, typing_events?, custom_events?}`; other Stream settings
    /// are accepted and ignored.
    func createChannelType(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        try call.caller.requireServer("creating a channel type")
        guard let name = try RequestFields.optionalString(call.body, "name") else { throw .invalid("name is required") }
        let type = ChannelType(name: name, readEvents: try RequestFields.optionalBool(call.body, "read_events") ?? true,
                               deliveryEvents: try RequestFields.optionalBool(call.body, "delivery_events") ?? false,
                               typingEvents: try RequestFields.optionalBool(call.body, "typing_events") ?? true,
                               customEvents: try RequestFields.optionalBool(call.body, "custom_events") ?? true)
        return service.submit(.createChannelType(type)).map(Self.channelTypeObject)
    }

    func updateChannelType(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        try call.caller.requireServer("updating a channel type")
        let name = call.parameters["name"] ?? ""
        return service.submit(.updateChannelType(name: name, readEvents: try RequestFields.optionalBool(call.body, "read_events"),
                                                 deliveryEvents: try RequestFields.optionalBool(call.body, "delivery_events"),
                                                 typingEvents: try RequestFields.optionalBool(call.body, "typing_events"),
                                                 customEvents: try RequestFields.optionalBool(call.body, "custom_events")))
            .map(Self.channelTypeObject)
    }

    func getChannelType(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        try call.caller.requireServer("reading a channel type")
        let name = call.parameters["name"] ?? ""
        return service.read { engine in
            guard let type = engine.channelTypes[name] else { throw ReceiptsError.unknownChannelType(name) }
            return RESTResultJSON.channelType(type)
        }
    }

    /// `{"channel_types": {name: type}}`, names in order.
    func listChannelTypes(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        try call.caller.requireServer("listing channel types")
        return service.read { engine in RESTResultJSON.channelTypes(engine.channelTypes) }
    }

    private static func channelTypeObject(_ outcome: ReceiptsOutcome) -> [UInt8] {
        guard case .channelType(let type) = outcome.result else { return emptyObject }
        return RESTResultJSON.channelType(type)
    }
}
