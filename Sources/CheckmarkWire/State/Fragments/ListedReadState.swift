import CheckmarkCore

/// A member's read state as anyone but the member may see it (rule 10's privacy applied); nil when
/// nothing of it may be shown, and then it takes no place in the list.
struct ListedReadState: EncodedListEntry {
    var userID: String
    var view: ReadStateView?

    var key: String { userID }

    static func == (lhs: Self, rhs: Self) -> Bool {
        SameEncoding.text(lhs.userID, rhs.userID) && SameEncoding.readState(lhs.view, rhs.view)
    }

    func encode(into writer: inout JSONWriter) {
        if let view { StreamJSON.write(readState: view, into: &writer) }
    }
}
