import CheckmarkCore

extension MessageLog {
    /// Every message, in order, each whole: for tests of logs that archived nothing (an archived
    /// text fails the test's precondition).
    package var heldMessages: [Message] {
        indices.map { position in
            guard let message = message(at: position) else { preconditionFailure("message \(position) of \(cid) is archived") }
            return message
        }
    }

    /// The message at `position`, whole (see ``heldMessages``).
    package subscript(position: Int) -> Message {
        guard let message = message(at: position) else { preconditionFailure("message \(position) of \(cid) is archived") }
        return message
    }
}
