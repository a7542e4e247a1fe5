extension ReceiptsEngine {
    mutating func upsertUser(_ user: User, at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        try checkProfileSize(user)
        var stored = user
        stored.createdAt = users[user.id]?.createdAt ?? now
        stored.updatedAt = now
        users[user.id] = stored
        touched.users.insert(user.id)
        return ReceiptsOutcome(result: .user(stored))
    }

    /// `set` may hold `name`, `image`, `privacy_settings` and custom fields; `unset` removes them.
    mutating func updateUser(_ patch: UserPatch, at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        var user = try user(patch.id)
        for (key, value) in patch.set {
            switch key {
            case "id", "created_at", "updated_at", "role":
                throw .invalidArgument("field \(key) cannot be changed")
            case "name":
                user.name = value.stringValue
            case "image":
                user.image = value.stringValue
            case "privacy_settings":
                user.privacy = try Self.privacy(from: value, current: user.privacy)
            default:
                user.custom.removeAll { $0.0 == key }
                user.custom.append((key, value))
            }
        }
        for key in patch.unset {
            switch key {
            case "name": user.name = nil
            case "image": user.image = nil
            case "privacy_settings": user.privacy = PrivacySettings()
            default: user.custom.removeAll { $0.0 == key }
            }
        }
        try checkProfileSize(user)
        user.updatedAt = now
        users[user.id] = user
        touched.users.insert(user.id)
        return ReceiptsOutcome(result: .user(user))
    }

    /// A user's profile (name, image and custom fields, as stored) may hold at most
    /// ``maxUserProfileBytes``: it is copied into every event and response that carries the user.
    func checkProfileSize(_ user: User) throws(ReceiptsError) {
        let size = (user.name?.utf8.count ?? 0) + (user.image?.utf8.count ?? 0) + CommandCodec.encodeCustom(user.custom).count
        guard size <= maxUserProfileBytes else {
            throw .invalidArgument("user \(user.id): a profile of \(size) bytes (name, image and custom fields) is over the limit of \(maxUserProfileBytes) (max_user_profile)")
        }
    }

    /// Reads `{"read_receipts": {"enabled": bool}, "delivery_receipts": {"enabled": bool},
    /// "typing_indicators": {"enabled": bool}}`; absent parts keep their current value.
    public static func privacy(from value: JSONValue, current: PrivacySettings = .init()) throws(ReceiptsError) -> PrivacySettings {
        guard case .object = value else { throw .invalidArgument("privacy_settings must be an object") }
        var result = current
        for (key, flag) in [("read_receipts", \PrivacySettings.readReceipts), ("delivery_receipts", \PrivacySettings.deliveryReceipts),
                            ("typing_indicators", \PrivacySettings.typingIndicators)] {
            guard let part = value[key] else { continue }
            if case .null = part { continue }
            guard let enabled = part["enabled"]?.boolValue else {
                throw .invalidArgument("privacy_settings.\(key).enabled must be a boolean")
            }
            result[keyPath: flag] = enabled
        }
        return result
    }

    mutating func createChannelType(_ type: ChannelType, at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        guard ChannelCID.isValidName(type.name) else { throw .invalidArgument("channel type name \(type.name) is not valid") }
        guard channelTypes[type.name] == nil else { throw .duplicate("channel type \(type.name)") }
        var stored = type
        stored.createdAt = now
        stored.updatedAt = now
        channelTypes[type.name] = stored
        touched.channelTypes.insert(type.name)
        return ReceiptsOutcome(result: .channelType(stored))
    }

    mutating func updateChannelType(_ name: String, readEvents: Bool?, deliveryEvents: Bool?, typingEvents: Bool?, customEvents: Bool?,
                                    at now: Timestamp) throws(ReceiptsError) -> ReceiptsOutcome {
        guard var type = channelTypes[name] else { throw .unknownChannelType(name) }
        if let readEvents { type.readEvents = readEvents }
        if let deliveryEvents { type.deliveryEvents = deliveryEvents }
        if let typingEvents { type.typingEvents = typingEvents }
        if let customEvents { type.customEvents = customEvents }
        type.updatedAt = now
        channelTypes[name] = type
        touched.channelTypes.insert(name)
        return ReceiptsOutcome(result: .channelType(type))
    }
}
