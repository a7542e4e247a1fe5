/// A message as a client sends it; the core assigns time and, when missing, the id.
public struct MessageDraft: Sendable, Hashable {
    public var id: String?
    public var text: String
    public var kind: Message.Kind
    public var parentID: String?
    public var showInChannel: Bool
    public var silent: Bool

    public init(id: String? = nil, text: String, kind: Message.Kind = .regular, parentID: String? = nil,
                showInChannel: Bool = false, silent: Bool = false) {
        self.id = id
        self.text = text
        self.kind = kind
        self.parentID = parentID
        self.showInChannel = showInChannel
        self.silent = silent
    }
}
