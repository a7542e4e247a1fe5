import CheckmarkCore

extension RequestFields {
    /// Longest event type accepted, in bytes.
    package static let maxEventTypeBytes = 255

    /// The signal an `event` object of `POST /channels/{type}/{id}/event` asks for: `typing.start` or
    /// `typing.stop` (with `parent_id` for a thread), or a custom event of any other type with the
    /// object's other fields.
    /// - Throws: 400 for a missing or empty type, one longer than ``maxEventTypeBytes``, one of
    ///   Stream's own (``ChannelSignal/isReservedType(_:)``), a `parent_id` that is not a string, or a
    ///   custom event whose JSON is larger than `maxCustomBytes` (`max_custom_event`).
    package static func signal(_ event: JSONValue, maxCustomBytes: Int) throws(WireError) -> ChannelSignal {
        guard case .object = event else { throw .invalid("event must be an object with a type") }
        guard let type = try optionalString(event, "type"), !type.isEmpty else { throw .invalid("event.type is required") }
        guard type.utf8.count <= maxEventTypeBytes else {
            throw .invalid("event.type is longer than \(maxEventTypeBytes) bytes")
        }
        let parentID = try optionalString(event, "parent_id")
        if let parentID, parentID.isEmpty || parentID.utf8.count > ReceiptsEngine.maxMessageIDBytes {
            throw .invalid("parent_id must be a message id of 1 to \(ReceiptsEngine.maxMessageIDBytes) bytes")
        }
        switch type {
        case "typing.start": return .typingStart(parentID: parentID)
        case "typing.stop": return .typingStop(parentID: parentID)
        default:
            guard !ChannelSignal.isReservedType(type) else {
                throw .invalid("event type \(type) is reserved for Stream's own events; choose a type outside Stream's namespaces")
            }
            var writer = JSONWriter()
            writer.value(event)
            guard writer.count <= maxCustomBytes else {
                throw .invalid("a custom event of \(writer.count) bytes is over the limit of \(maxCustomBytes) (max_custom_event)")
            }
            return .custom(type: type, fields: event)
        }
    }
}
