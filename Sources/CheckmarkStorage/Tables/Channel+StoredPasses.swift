import CheckmarkCore

extension Channel {
    /// Appends a loaded pointer pass of member `userID` in place (not through a copy of the channel):
    /// how both stores put a member's passes back from `pointer_passes`, in their order.
    /// - Throws: ``StorageError/corrupt(path:reason:)`` for a pass of a user who is not a member, or a
    ///   pass that does not come after the member's last of its kind.
    mutating func appendStored(_ pass: PointerPass, kind: PointerPassKind, of userID: String) throws(StorageError) {
        guard let member = members.index(forKey: userID) else {
            throw .corrupt(path: "", reason: "pointer pass of \(userID), not a member of \(cid)")
        }
        let channel = cid
        func append(to passes: inout PointerPasses) throws(StorageError) {
            if let last = passes.last, last.position >= pass.position {
                throw .corrupt(path: "", reason: "pointer pass of \(userID) in \(channel) at \(pass.position), after one at \(last.position)")
            }
            passes.append(pass)
        }
        switch kind {
        case .read: try append(to: &members.values[member].read.readPasses)
        case .delivered: try append(to: &members.values[member].read.deliveredPasses)
        }
    }
}
