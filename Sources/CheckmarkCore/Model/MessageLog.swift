/// A channel's messages, channel messages and thread replies, in `createdAt` order (a message's
/// position is its index). For every message it holds what the rules need: id, author, time and
/// kind. The text, the one field of any size, it holds only for the newest messages (the window)
/// and for messages whose storage has not confirmed them yet: an older text is archived, read back
/// from storage when a page or a thread's title asks for it (``text(at:)`` is nil for it, and
/// ``message(at:)`` too).
///
/// Contract: a text is archived only by ``markDurable(count:keepingNewest:)``, and only below the
/// count storage confirmed, so that storage always has what memory dropped.
///
/// Edits and deletions (``MessageRevision``) are held for every message that has one, few as they
/// are, and so is the text of every message edited since the log was loaded: a text read back from
/// storage before an edit landed (``recall(_:at:keepingAtMost:)``, a page's ``ArchivedTexts``) can
/// then never stand in for the edited one. A restore holds the edited texts of the window only.
public struct MessageLog: Sendable {
    /// The channel all messages belong to.
    public var cid: ChannelCID
    private var ids = MessageIDs()
    private var times: [Timestamp] = []
    private var authorRefs: [UInt32] = []
    private var flags: [Flags] = []
    /// The texts from position ``textBase`` on; "" where archived (``Flags/archived``). Those before
    /// are all archived, and take no room.
    private var texts: [String] = []
    private var textBase = 0
    /// Authors, each once, by the reference ``authorRefs`` hold.
    private var authorNames: [String] = []
    private var authorRefByName: [String: UInt32] = [:]
    /// The parent message id of each reply, by the reply's position (replies only).
    private var parentIDs: [Int: String] = [:]
    /// Archived texts read back from storage for a thread's title (``recall(_:at:keepingAtMost:)``), by
    /// position, and their positions in the order they were recalled.
    private var recalledTexts: [Int: String] = [:]
    private var recalledOrder: [Int] = []
    /// Edits and deletions, by position.
    private var revisions: [Int: MessageRevision] = [:]
    /// The current texts of messages edited since the log was loaded, and of the window's edited
    /// messages at the load (``Flags/edited``), by position: each with the number of the edit that
    /// set it, and whether storage confirmed it.
    private var editedTexts: [Int: EditedText] = [:]
    /// Reactions, by position, oldest first (rules R1-R5): every message's that has any.
    private var reactionLists: [Int: [Reaction]] = [:]
    /// Numbers the edits of this log's texts (``EditedText/edit``).
    private var lastEdit = 0

    private struct EditedText: Sendable {
        var text: String
        var edit: Int
        var durable: Bool
    }

    /// Messages storage confirmed: positions below this one.
    public private(set) var durableCount = 0
    /// How many messages count as unread for members other than their authors (rule 4: channel
    /// messages that are not silent). A member's unread count is this total less the count when it
    /// last read, less its own such messages since; storage keeps the total as seen by each member.
    public private(set) var countableCount = 0
    /// Positions below this one were looked at for archiving.
    private var archivedThrough = 0

    private struct Flags: OptionSet, Sendable {
        let rawValue: UInt8
        static let reply = Flags(rawValue: 1)
        static let showInChannel = Flags(rawValue: 2)
        static let silent = Flags(rawValue: 4)
        static let system = Flags(rawValue: 8)
        static let archived = Flags(rawValue: 16)
        /// Its text was edited: the current one is in ``editedTexts`` (or, archived, in storage).
        static let edited = Flags(rawValue: 32)

        init(rawValue: UInt8) { self.rawValue = rawValue }

        init(_ message: Message) {
            var flags: Flags = []
            if message.parentID != nil { flags.insert(.reply) }
            if message.showInChannel { flags.insert(.showInChannel) }
            if message.silent { flags.insert(.silent) }
            if message.kind == .system { flags.insert(.system) }
            self = flags
        }

        /// A thread reply not shown in the channel (``Message/isThreadOnly``).
        var isThreadOnly: Bool { contains(.reply) && !contains(.showInChannel) }
    }

    public init(cid: ChannelCID) {
        self.cid = cid
    }

    /// What an id's length is taken to be when nothing says (in bytes).
    public static let typicalIDBytes = 16

    public var count: Int { ids.count }
    public var isEmpty: Bool { ids.count == 0 }
    public var indices: Range<Int> { 0..<ids.count }

    /// Makes room for `count` messages in all (a restore that knows how many it loads).
    /// (`bytesPerID`: the ids' expected length in UTF-8 bytes.)
    public mutating func reserveCapacity(_ count: Int, bytesPerID: Int = MessageLog.typicalIDBytes) {
        ids.reserveCapacity(count, bytesPerID: bytesPerID)
        times.reserveCapacity(count)
        authorRefs.reserveCapacity(count)
        flags.reserveCapacity(count)
    }

    // MARK: Reading

    /// The position of the message with this id, if the channel has one.
    public func position(of id: String) -> Int? { ids.position(of: id) }

    public func id(at position: Int) -> String { ids[position] }
    public func createdAt(at position: Int) -> Timestamp { times[position] }
    public func userID(at position: Int) -> String { authorNames[Int(authorRefs[position])] }
    public func parentID(at position: Int) -> String? { flags[position].contains(.reply) ? parentIDs[position] : nil }
    /// Whether the message is a thread reply (shown in the channel or not).
    public func isReply(at position: Int) -> Bool { flags[position].contains(.reply) }
    /// Part of the channel's message list (not a thread-only reply).
    public func isChannelMessage(at position: Int) -> Bool { !flags[position].isThreadOnly }
    public func isSilent(at position: Int) -> Bool { flags[position].contains(.silent) }
    /// Whether the message counts as unread for members other than its author (rule 4): a channel
    /// message, not silent (what ``countableCount`` counts).
    public func isCountable(at position: Int) -> Bool {
        let flags = flags[position]
        return !flags.isThreadOnly && !flags.contains(.silent)
    }
    /// The newest message's time.
    public var lastCreatedAt: Timestamp? { times.last }

    /// Whether the message counts as unread after their read pointer (rule 4) for the user whose
    /// author reference is `author` (``authorRef(of:)``, looked up once for a run of messages):
    /// ``Message/countsAsUnread(for:)`` without building the message.
    public func countsAsUnread(at position: Int, forAuthor author: UInt32?) -> Bool {
        let flags = flags[position]
        return !flags.isThreadOnly && !flags.contains(.silent) && authorRefs[position] != author
    }

    /// Whether the reply counts as an unread reply for `userID` (``Message/countsAsUnreadReply(for:)``).
    public func countsAsUnreadReply(at position: Int, for userID: String) -> Bool {
        !flags[position].contains(.silent) && authorRefs[position] != authorRefByName[userID]
    }

    /// The reference of an author in this log (nil: never wrote one of its messages).
    public func authorRef(of userID: String) -> UInt32? { authorRefByName[userID] }
    /// The author reference of the message at `position`.
    public func authorRef(at position: Int) -> UInt32 { authorRefs[position] }

    /// The message's current text, or nil when it is archived (and not recalled).
    public func text(at position: Int) -> String? {
        let flags = flags[position]
        if flags.contains(.edited), let edited = editedTexts[position] { return edited.text }
        return flags.contains(.archived) ? recalledTexts[position] : texts[position - textBase]
    }

    /// The text the message was sent with, while it is held (what its `messages` row stores).
    public func sentText(at position: Int) -> String? {
        flags[position].contains(.archived) ? nil : texts[position - textBase]
    }

    /// The message's last edit and deletion, if it has any.
    public func revision(at position: Int) -> MessageRevision? { revisions[position] }

    /// Whether the message was deleted.
    public func isDeleted(at position: Int) -> Bool { revisions[position]?.isDeleted ?? false }

    /// The number of the edit that set the message's text, while storage has not confirmed it
    /// (what ``markEditDurable(at:edit:)`` is given once it has).
    public func pendingEdit(at position: Int) -> Int? {
        editedTexts[position].flatMap { $0.durable ? nil : $0.edit }
    }

    /// Whether an edited text waits for storage to confirm it.
    public var hasPendingEdits: Bool { editedTexts.values.contains { !$0.durable } }

    /// Whether the message's text is in memory (``text(at:)`` is not nil).
    public func holdsText(at position: Int) -> Bool { text(at: position) != nil }

    /// The whole message, or nil when its text is archived (and not recalled).
    public func message(at position: Int) -> Message? {
        guard let text = text(at: position) else { return nil }
        return message(at: position, text: text)
    }

    /// The message at `position` with `text` (for an archived message, the text storage gave back).
    public func message(at position: Int, text: String) -> Message {
        let flags = flags[position]
        var message = Message(
            id: ids[position], cid: cid, userID: authorNames[Int(authorRefs[position])], text: text,
            kind: flags.contains(.system) ? .system : .regular, createdAt: times[position], parentID: parentID(at: position),
            showInChannel: flags.contains(.showInChannel), silent: flags.contains(.silent), revision: revisions[position])
        if let reactions = reactionLists[position] { message.reactions = reactions }
        return message
    }

    /// The message's reactions, oldest first.
    public func reactions(at position: Int) -> [Reaction] { reactionLists[position] ?? [] }

    /// Replaces the message's reactions (none: an empty list).
    public mutating func setReactions(_ reactions: [Reaction], at position: Int) {
        reactionLists[position] = reactions.isEmpty ? nil : reactions
    }

    /// The message as it was sent (what its `messages` row stores), while its text is held.
    public func sentMessage(at position: Int) -> Message? {
        guard let text = sentText(at: position) else { return nil }
        var message = message(at: position, text: text)
        message.revision = nil
        message.reactions = []
        return message
    }

    // MARK: Changing

    /// Appends a message (its text held until it is durable and out of the window).
    public mutating func append(_ message: Message) {
        append(message, holdingText: true)
    }

    /// Appends a message that storage already has (a restore); `holdingText` false archives its text.
    public mutating func appendStored(_ message: Message, holdingText: Bool) {
        append(message, holdingText: holdingText)
        durableCount = count
        if !holdingText && archivedThrough == count - 1 { archivedThrough = count }
    }

    private mutating func append(_ message: Message, holdingText: Bool) {
        let position = ids.count
        ids.append(message.id)
        times.append(message.createdAt)
        authorRefs.append(reference(of: message.userID))
        var flags = Flags(message)
        if !holdingText { flags.insert(.archived) }
        self.flags.append(flags)
        if holdingText || !texts.isEmpty {
            texts.append(holdingText ? message.text : "")
        } else {
            textBase = position + 1  // archived, as every one before: no room taken
        }
        if let parentID = message.parentID { parentIDs[position] = parentID }
        if isCountable(at: position) { countableCount += 1 }
    }

    private mutating func reference(of author: String) -> UInt32 {
        if let known = authorRefByName[author] { return known }
        let reference = UInt32(authorNames.count)
        authorNames.append(author)
        authorRefByName[author] = reference
        return reference
    }

    /// Records an edit or a deletion of the message at `position`: its revision, and with `text` its
    /// new text (held until storage confirms this edit, ``pendingEdit(at:)``).
    public mutating func revise(at position: Int, _ revision: MessageRevision, text: String?) {
        revisions[position] = revision
        guard let text else { return }
        lastEdit += 1
        editedTexts[position] = EditedText(text: text, edit: lastEdit, durable: false)
        flags[position].insert(.edited)
        if recalledTexts.removeValue(forKey: position) != nil { recalledOrder.removeAll { $0 == position } }
    }

    /// A revision storage already has (a restore), with the text it stores when the edit changed it;
    /// `holdingText` false leaves that text in storage.
    public mutating func restoreRevision(at position: Int, _ revision: MessageRevision, text: String?, holdingText: Bool) {
        revisions[position] = revision
        guard let text else { return }
        flags[position].insert(.edited)
        if holdingText {
            lastEdit += 1
            editedTexts[position] = EditedText(text: text, edit: lastEdit, durable: true)
        }
    }

    /// Storage confirmed edit number `edit` of the message at `position` (``pendingEdit(at:)``); a
    /// later edit stays pending. The text stays in memory (see the type's contract).
    public mutating func markEditDurable(at position: Int, edit: Int) {
        guard position < count, editedTexts[position]?.edit == edit else { return }
        editedTexts[position]!.durable = true
    }

    /// Storage confirmed the first `count` messages: archives the texts of those that are older than
    /// the newest `window` messages.
    public mutating func markDurable(count confirmed: Int, keepingNewest window: Int) {
        durableCount = max(durableCount, min(confirmed, count))
        let end = min(durableCount, max(0, count - max(window, 0)))
        while archivedThrough < end {
            if !flags[archivedThrough].contains(.archived) {
                flags[archivedThrough].insert(.archived)
                texts[archivedThrough - textBase] = ""
            }
            archivedThrough += 1
        }
        // The archived slots go once they are at least half the list (and 64): each text is moved
        // about once.
        let archivedSlots = archivedThrough - textBase
        if archivedSlots >= 64 && archivedSlots * 2 >= texts.count {
            texts.removeFirst(archivedSlots)
            textBase = archivedThrough
        }
    }

    /// Holds the text storage gave back for an archived message that a thread's title needs: at most
    /// `limit` such texts, the longest recalled dropped first (a command that needs one again reads
    /// it again), so that titles of old threads do not pile up in memory.
    public mutating func recall(_ text: String, at position: Int, keepingAtMost limit: Int) {
        guard flags[position].contains(.archived) else { return }
        guard recalledTexts.updateValue(text, forKey: position) == nil else { return }
        recalledOrder.append(position)
        let excess = recalledOrder.count - max(limit, 1)
        if excess > 0 {
            for dropped in recalledOrder.prefix(excess) { recalledTexts[dropped] = nil }
            recalledOrder.removeFirst(excess)
        }
    }

    /// How many archived texts are held for threads' titles.
    public var recalledCount: Int { recalledTexts.count }

    /// How many texts are archived (the rest are held).
    public var archivedCount: Int { archivedThrough }
}
