/// Which of a member's two pointers a stored pointer pass belongs to, as the `kind` column of
/// SQLite's `pointer_passes` stores it.
enum PointerPassKind: Int64, Sendable, CaseIterable {
    /// The read pointer (`ReadState.readPasses`).
    case read = 0
    /// The delivered pointer (`ReadState.deliveredPasses`).
    case delivered = 1
}
