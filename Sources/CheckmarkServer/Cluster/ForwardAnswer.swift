import CheckmarkCore
import CheckmarkWire

/// How the owner of a shard answered a command another node forwarded to it (``PeerMessage/forward(from:to:id:command:)``).
enum ForwardAnswer: Sendable, Equatable {
    /// Applied and durable, with its result. A message's text is not sent back: the asking node has
    /// it in its command (a deleted or reacted-to message's is ""); nor its revision and reactions:
    /// the answer the owner made (``CommandAnswer``) carries the whole message.
    case applied(ReceiptsResult)
    /// Applied, and it changed nothing (a duplicate confirmation).
    case unchanged
    /// Refused by the rules.
    case refused(ReceiptsError)
    /// The node does not own the command's shard (any more): the asking node applies it itself.
    case notOwner
    /// Storage failed at the owner: nothing of it is durable; the client may retry.
    case failed(String)

    /// The answer a service outcome makes.
    init(_ result: Result<ReceiptsOutcome, ServiceError>) {
        switch result {
        case .success(let outcome):
            self = outcome.changed ? .applied(outcome.result) : .unchanged
        case .failure(.rejected(let error)):
            self = .refused(error)
        case .failure(.storage(let error)):
            self = .failed(error.description)
        case .failure(.shuttingDown):
            self = .failed("the shard's owner is shutting down")
        }
    }

    /// The outcome to complete the asking command with, `command` being what was forwarded.
    func outcome(of command: ReceiptsCommand) -> Result<ReceiptsOutcome, ServiceError> {
        switch self {
        case .applied(var result):
            if case .message(var message) = result, case .sendMessage(_, _, let draft) = command {
                message.text = draft.text
                result = .message(message)
            }
            if case .message(var message) = result, case .updateMessage(_, _, let text, _) = command {
                message.text = text
                result = .message(message)
            }
            return .success(ReceiptsOutcome(result: result))
        case .unchanged:
            return .success(.unchanged)
        case .refused(let error):
            return .failure(.rejected(error))
        case .notOwner:
            return .failure(.storage(.unavailable(reason: "the shard's owner no longer holds it")))
        case .failed(let reason):
            return .failure(.storage(.unavailable(reason: "the shard's owner could not store it: \(reason)")))
        }
    }
}
