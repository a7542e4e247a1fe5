import CheckmarkCore

/// Why the service did not carry out a command.
package enum ServiceError: Error, Sendable, CustomStringConvertible {
    /// The receipts rules refused it; nothing changed.
    case rejected(ReceiptsError)
    /// Storage failed; the command is not acknowledged (and the server stops, see ``ReceiptsService``).
    case storage(StorageError)
    /// The server is shutting down and accepts no new commands.
    case shuttingDown

    package var description: String {
        switch self {
        case .rejected(let error): error.description
        case .storage(let error): error.description
        case .shuttingDown: "the server is shutting down"
        }
    }
}
