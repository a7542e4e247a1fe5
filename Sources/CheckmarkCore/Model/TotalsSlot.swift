/// Where a user's unread totals sit in the engine's dense table of totals: given when the user first
/// needs totals and kept for the engine's life (users are never removed), so that a new message's
/// members and recipients reach their totals by index instead of hashing their id. Bookkeeping of one
/// engine, not state: a restored engine may number the same users differently, so members and
/// watchers compare equal whatever their slots.
public struct TotalsSlot: Sendable, Hashable {
    let index: Int32

    /// Not given yet: a member made outside the engine, before the engine takes it in.
    public static let unassigned = TotalsSlot(index: -1)
}
