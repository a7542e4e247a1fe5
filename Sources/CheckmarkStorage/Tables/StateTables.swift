import CheckmarkCore
import Foundation

/// Every table storage writes, described once: columns with their logical types and the model
/// values they hold, primary keys, and how loaded values become the model again. Both stores write
/// and load through these (see ``TableDescription``); the migrations that created the tables stay
/// as released.
enum StateTables {
    /// A member in its channel's order (`position`), with how many messages of the channel counted as
    /// unread for others (``MessageLog/countableCount``) when its unread count was taken.
    typealias MemberRow = (cid: ChannelCID, position: Int, member: Member, countableSeen: Int)
    /// A message at its position, with how many messages before it count as unread for others.
    typealias MessageRow = (position: Int, message: Message, countableBefore: Int)
    typealias ChannelObjectRow = (cid: ChannelCID, since: Int64, object: [UInt8])
    /// A reaction to the message at `position` of `cid`.
    typealias ReactionRow = (cid: ChannelCID, position: Int, reaction: Reaction)
    typealias CounterRow = (name: String, value: Int64)
    typealias SequenceRow = (cid: ChannelCID, lastSeq: Int64)
    /// A thread's counts: its replies, and those that count as unread for others (not silent).
    typealias ThreadRow = (cid: ChannelCID, parentID: String, replyCount: Int, countableReplies: Int)
    typealias PassRow = (cid: ChannelCID, userID: String, kind: PointerPassKind, pass: PointerPass)
    /// A pass with its place among the member's passes of its kind (0 first): PostgreSQL's key.
    typealias OrdinalPassRow = (cid: ChannelCID, userID: String, kind: PointerPassKind, ordinal: Int, pass: PointerPass)

    static let users = TableDescription<User>(
        name: "users",
        columns: [
            .init("id", .text) { .text($0.id) },
            .init("name", .text, nullable: true) { .text($0.name) },
            .init("image", .text, nullable: true) { .text($0.image) },
            .init("custom", .text) { .text(String(decoding: CommandCodec.encodeCustom($0.custom), as: UTF8.self)) },
            .init("read_receipts", .boolean) { .boolean($0.privacy.readReceipts) },
            .init("delivery_receipts", .boolean) { .boolean($0.privacy.deliveryReceipts) },
            .init("created_at", .integer) { .integer($0.createdAt.rawValue) },
            .init("updated_at", .integer) { .integer($0.updatedAt.rawValue) },
            .init("typing_indicators", .boolean) { .boolean($0.privacy.typingIndicators) },
        ],
        primaryKey: ["id"],
        decode: { (row) throws(StorageError) in
            let text = try row["custom"].text
            let custom: [(String, JSONValue)]
            do { custom = try CommandCodec.decodeCustom(Array(text.utf8)) } catch { throw .corrupt(path: "", reason: "user custom fields: \(error)") }
            return User(
                id: try row["id"].text, name: try row["name"].optionalText, image: try row["image"].optionalText, custom: custom,
                privacy: PrivacySettings(readReceipts: try row["read_receipts"].boolean, deliveryReceipts: try row["delivery_receipts"].boolean,
                                         typingIndicators: try row["typing_indicators"].boolean),
                createdAt: Timestamp(rawValue: try row["created_at"].integer), updatedAt: Timestamp(rawValue: try row["updated_at"].integer))
        })

    static let channelTypes = TableDescription<ChannelType>(
        name: "channel_types",
        columns: [
            .init("name", .text) { .text($0.name) },
            .init("read_events", .boolean) { .boolean($0.readEvents) },
            .init("delivery_events", .boolean) { .boolean($0.deliveryEvents) },
            .init("created_at", .integer) { .integer($0.createdAt.rawValue) },
            .init("updated_at", .integer) { .integer($0.updatedAt.rawValue) },
            .init("typing_events", .boolean) { .boolean($0.typingEvents) },
            .init("custom_events", .boolean) { .boolean($0.customEvents) },
        ],
        primaryKey: ["name"],
        decode: { (row) throws(StorageError) in
            ChannelType(
                name: try row["name"].text, readEvents: try row["read_events"].boolean, deliveryEvents: try row["delivery_events"].boolean,
                typingEvents: try row["typing_events"].boolean, customEvents: try row["custom_events"].boolean,
                createdAt: Timestamp(rawValue: try row["created_at"].integer), updatedAt: Timestamp(rawValue: try row["updated_at"].integer))
        })

    /// The channel's own row; its members, messages and thread reads are rows of their own tables.
    static let channels = TableDescription<Channel>(
        name: "channels",
        columns: [
            .init("cid", .text) { .text($0.cid.description) },
            .init("created_by", .text, nullable: true) { .text($0.createdBy) },
            .init("created_at", .integer) { .integer($0.createdAt.rawValue) },
        ],
        primaryKey: ["cid"],
        decode: { (row) throws(StorageError) in
            Channel(cid: try cid(row["cid"].text), createdBy: try row["created_by"].optionalText,
                    createdAt: Timestamp(rawValue: try row["created_at"].integer))
        })

    /// Members in their channel's order (`position`). From schema v7 the unread count is stored with
    /// the channel's count of countable messages at that moment (`countable_seen`): between two writes
    /// of a member's row only others' messages move its count (its own countable message moves its
    /// read pointer, rule 3, and so writes the row), so the count now is the stored one plus the
    /// countable messages since, with no message read. Each column reads its field through the row
    /// (not a copy of the member's read state per column).
    static let members = TableDescription<MemberRow>(
        name: "members",
        columns: [
            .init("cid", .text) { .text($0.cid.description) },
            .init("user_id", .text) { .text($0.member.userID) },
            .init("position", .integer) { .integer(Int64($0.position)) },
            .init("created_at", .integer) { .integer($0.member.createdAt.rawValue) },
            .init("read_position", .integer) { .integer(Int64($0.member.read.readPosition)) },
            .init("last_read", .integer) { .integer($0.member.read.lastRead.rawValue) },
            .init("last_read_message_id", .text, nullable: true) { .text($0.member.read.lastReadMessageID) },
            .init("delivered_position", .integer) { .integer(Int64($0.member.read.deliveredPosition)) },
            .init("last_delivered_at", .integer, nullable: true) { .integer($0.member.read.lastDeliveredAt?.rawValue) },
            .init("last_delivered_message_id", .text, nullable: true) { .text($0.member.read.lastDeliveredMessageID) },
            .init("marked_unread_message_id", .text, nullable: true) { .text($0.member.read.markedUnreadMessageID) },
            .init("read_passes", .blob) { .blob(StoredPasses.encode($0.member.read.readPasses)) },
            .init("delivered_passes", .blob) { .blob(StoredPasses.encode($0.member.read.deliveredPasses)) },
            .init("unread_messages", .integer) { .integer(Int64($0.member.read.unreadMessages)) },
            .init("countable_seen", .integer) { .integer(Int64($0.countableSeen)) },
        ],
        primaryKey: ["cid", "user_id"],
        decode: { (row) throws(StorageError) in
            var read = ReadState(joinedAt: Timestamp(rawValue: try row["last_read"].integer), messageCount: Int(try row["read_position"].integer))
            read.lastReadMessageID = try row["last_read_message_id"].optionalText
            read.deliveredPosition = Int(try row["delivered_position"].integer)
            read.lastDeliveredAt = try row["last_delivered_at"].optionalInteger.map(Timestamp.init(rawValue:))
            read.lastDeliveredMessageID = try row["last_delivered_message_id"].optionalText
            read.markedUnreadMessageID = try row["marked_unread_message_id"].optionalText
            read.readPasses = try StoredPasses.decode(row["read_passes"].blob)
            read.deliveredPasses = try StoredPasses.decode(row["delivered_passes"].blob)
            read.unreadMessages = Int(try row["unread_messages"].integer)
            let member = Member(userID: try row["user_id"].text, createdAt: Timestamp(rawValue: try row["created_at"].integer), read: read)
            return (try cid(row["cid"].text), Int(try row["position"].integer), member, Int(try row["countable_seen"].integer))
        })

    /// The key and read-state columns of ``members``: what a single member's change updates, every
    /// column but the member's position and join time, which stay (rows given for it may carry any
    /// position).
    static var memberReadStateUpdate: [TableColumn<MemberRow>] {
        members.columns.filter { $0.name != "position" && $0.name != "created_at" }
    }

    /// ``members`` as SQLite writes it from schema v5 on: the pointer passes are rows of
    /// ``pointerPasses``, appended as they are made, so the two pass columns are written empty.
    static let membersWithoutPasses = TableDescription<MemberRow>(
        name: members.name,
        columns: members.columns.map { column in
            isPassColumn(column.name) ? TableColumn(column.name, .blob) { _ in .blob(Data()) } : column
        },
        primaryKey: members.primaryKey,
        decode: members.decode)

    /// ``memberReadStateUpdate`` without the pass columns: SQLite's update of a member's read state
    /// (its new passes are appended to ``pointerPasses`` instead).
    static var memberReadStateUpdateWithoutPasses: [TableColumn<MemberRow>] {
        memberReadStateUpdate.filter { !isPassColumn($0.name) }
    }

    private static func isPassColumn(_ name: String) -> Bool { name == "read_passes" || name == "delivered_passes" }

    /// SQLite's pointer passes (schema v5): one row per pass, so a confirmation appends its pass
    /// instead of rewriting the member's whole history. `seq` (the row id, assigned by SQLite when
    /// written as NULL) keeps each member's passes of each kind in the order they were made.
    static let pointerPasses = TableDescription<PassRow>(
        name: "pointer_passes",
        columns: [
            .init("seq", .integer, nullable: true) { _ in .integer(nil) },
            .init("cid", .text) { .text($0.cid.description) },
            .init("user_id", .text) { .text($0.userID) },
            .init("kind", .integer) { .integer($0.kind.rawValue) },
            .init("position", .integer) { .integer(Int64($0.pass.position)) },
            .init("at", .integer) { .integer($0.pass.at.rawValue) },
        ],
        primaryKey: ["seq"],
        decode: { (row) throws(StorageError) in
            let code = try row["kind"].integer
            guard let kind = PointerPassKind(rawValue: code) else { throw .corrupt(path: "", reason: "pointer pass of kind \(code)") }
            let pass = PointerPass(position: Int(try row["position"].integer), at: Timestamp(rawValue: try row["at"].integer))
            return (try cid(row["cid"].text), try row["user_id"].text, kind, pass)
        })

    /// PostgreSQL's pointer passes (its migration v10): one row per pass, keyed by the member, the
    /// kind and the pass's ordinal, so that nodes writing the same pass (every node's engine holds
    /// the same passes at the same places) write one row, and a confirmation appends its pass instead
    /// of rewriting the member's whole history.
    static let postgresPointerPasses = TableDescription<OrdinalPassRow>(
        name: "pointer_passes",
        columns: [
            .init("cid", .text) { .text($0.cid.description) },
            .init("user_id", .text) { .text($0.userID) },
            .init("kind", .integer) { .integer($0.kind.rawValue) },
            .init("ordinal", .integer) { .integer(Int64($0.ordinal)) },
            .init("position", .integer) { .integer(Int64($0.pass.position)) },
            .init("at", .integer) { .integer($0.pass.at.rawValue) },
        ],
        primaryKey: ["cid", "user_id", "kind", "ordinal"],
        decode: { (row) throws(StorageError) in
            let code = try row["kind"].integer
            guard let kind = PointerPassKind(rawValue: code) else { throw .corrupt(path: "", reason: "pointer pass of kind \(code)") }
            let pass = PointerPass(position: Int(try row["position"].integer), at: Timestamp(rawValue: try row["at"].integer))
            return (try cid(row["cid"].text), try row["user_id"].text, kind, Int(try row["ordinal"].integer), pass)
        })

    /// Messages; from schema v7 each with `countable_before`, the count of messages before it that
    /// count as unread for others (a channel's total is its newest row's plus that row's own).
    static let messages = TableDescription<MessageRow>(
        name: "messages",
        columns: [
            .init("cid", .text) { .text($0.message.cid.description) },
            .init("position", .integer) { .integer(Int64($0.position)) },
            .init("id", .text) { .text($0.message.id) },
            .init("user_id", .text) { .text($0.message.userID) },
            .init("text", .text) { .text($0.message.text) },
            .init("type", .text) { .text($0.message.kind.rawValue) },
            .init("created_at", .integer) { .integer($0.message.createdAt.rawValue) },
            .init("parent_id", .text, nullable: true) { .text($0.message.parentID) },
            .init("show_in_channel", .boolean) { .boolean($0.message.showInChannel) },
            .init("silent", .boolean) { .boolean($0.message.silent) },
            .init("countable_before", .integer) { .integer(Int64($0.countableBefore)) },
        ],
        primaryKey: ["cid", "position"],
        decode: { (row) throws(StorageError) in
            let message = Message(
                id: try row["id"].text, cid: try cid(row["cid"].text), userID: try row["user_id"].text, text: try row["text"].text,
                kind: Message.Kind(rawValue: try row["type"].text) ?? .regular, createdAt: Timestamp(rawValue: try row["created_at"].integer),
                parentID: try row["parent_id"].optionalText, showInChannel: try row["show_in_channel"].boolean, silent: try row["silent"].boolean)
            return (Int(try row["position"].integer), message, Int(try row["countable_before"].integer))
        })

    /// Messages edited or deleted (from schema v16, SQLite v13): their revision and current text.
    static let messageEdits = TableDescription<MessageEditRow>(
        name: "message_edits",
        columns: [
            .init("cid", .text) { .text($0.cid.description) },
            .init("position", .integer) { .integer(Int64($0.position)) },
            .init("text", .text, nullable: true) { .text($0.text) },
            .init("updated_at", .integer) { .integer($0.revision.updatedAt.rawValue) },
            .init("text_updated_at", .integer, nullable: true) { .integer($0.revision.textUpdatedAt?.rawValue) },
            .init("deleted_at", .integer, nullable: true) { .integer($0.revision.deletedAt?.rawValue) },
            .init("hard_deleted", .boolean) { .boolean($0.revision.hardDeleted) },
        ],
        primaryKey: ["cid", "position"],
        decode: { (row) throws(StorageError) in
            let revision = MessageRevision(
                updatedAt: Timestamp(rawValue: try row["updated_at"].integer),
                textUpdatedAt: try row["text_updated_at"].optionalInteger.map(Timestamp.init(rawValue:)),
                deletedAt: try row["deleted_at"].optionalInteger.map(Timestamp.init(rawValue:)),
                hardDeleted: try row["hard_deleted"].boolean)
            return MessageEditRow(cid: try cid(row["cid"].text), position: Int(try row["position"].integer), revision: revision,
                                  text: try row["text"].optionalText)
        })

    /// Reactions (from schema v17, SQLite v14), each user's of each type to each message.
    static let reactions = TableDescription<ReactionRow>(
        name: "reactions",
        columns: [
            .init("cid", .text) { .text($0.cid.description) },
            .init("position", .integer) { .integer(Int64($0.position)) },
            .init("user_id", .text) { .text($0.reaction.userID) },
            .init("type", .text) { .text($0.reaction.type) },
            .init("score", .integer) { .integer(Int64($0.reaction.score)) },
            .init("created_at", .integer) { .integer($0.reaction.createdAt.rawValue) },
            .init("updated_at", .integer) { .integer($0.reaction.updatedAt.rawValue) },
        ],
        primaryKey: ["cid", "position", "user_id", "type"],
        decode: { (row) throws(StorageError) in
            let reaction = Reaction(
                userID: try row["user_id"].text, type: try row["type"].text, score: Int(try row["score"].integer),
                createdAt: Timestamp(rawValue: try row["created_at"].integer), updatedAt: Timestamp(rawValue: try row["updated_at"].integer))
            return (try cid(row["cid"].text), Int(try row["position"].integer), reaction)
        })

    /// Thread participants' pointers. From schema v8 with their unread replies and the thread's count
    /// of countable replies they are as of (``ThreadReadRow``), as ``members`` keeps unread counts.
    static let threadReads = TableDescription<ThreadReadRow>(
        name: "thread_reads",
        columns: [
            .init("cid", .text) { .text($0.cid.description) },
            .init("parent_id", .text) { .text($0.parentID) },
            .init("user_id", .text) { .text($0.userID) },
            .init("read_count", .integer) { .integer(Int64($0.read.readCount)) },
            .init("last_read", .integer) { .integer($0.read.lastRead.rawValue) },
            .init("last_read_message_id", .text, nullable: true) { .text($0.read.lastReadMessageID) },
            .init("unread_replies", .integer) { .integer(Int64($0.read.unreadReplies)) },
            .init("replies_seen", .integer) { .integer(Int64($0.repliesSeen)) },
        ],
        primaryKey: ["cid", "parent_id", "user_id"],
        decode: { (row) throws(StorageError) in
            let read = ThreadReadState(
                readCount: Int(try row["read_count"].integer), lastRead: Timestamp(rawValue: try row["last_read"].integer),
                lastReadMessageID: try row["last_read_message_id"].optionalText, unreadReplies: Int(try row["unread_replies"].integer))
            return ThreadReadRow(cid: try cid(row["cid"].text), parentID: try row["parent_id"].text, userID: try row["user_id"].text, read: read,
                                 repliesSeen: Int(try row["replies_seen"].integer))
        })

    /// Threads' counts (schema v8), written with each reply: what a participant's unread replies are
    /// brought forward to, without reading the replies.
    static let threads = TableDescription<ThreadRow>(
        name: "threads",
        columns: [
            .init("cid", .text) { .text($0.cid.description) },
            .init("parent_id", .text) { .text($0.parentID) },
            .init("reply_count", .integer) { .integer(Int64($0.replyCount)) },
            .init("countable_replies", .integer) { .integer(Int64($0.countableReplies)) },
        ],
        primaryKey: ["cid", "parent_id"],
        decode: { (row) throws(StorageError) in
            (try cid(row["cid"].text), try row["parent_id"].text, Int(try row["reply_count"].integer), Int(try row["countable_replies"].integer))
        })

    /// Named counters: the journal's positions as retention last kept them (``JournalPositions``),
    /// the journal sweep's place (``JournalPruning``), and, from before schema v12 (SQLite v10),
    /// `generated_message_ids`, which nothing reads any more.
    static let counters = TableDescription<CounterRow>(
        name: "counters",
        columns: [
            .init("name", .text) { .text($0.name) },
            .init("value", .integer) { .integer($0.value) },
        ],
        primaryKey: ["name"],
        decode: { (row) throws(StorageError) in (try row["name"].text, try row["value"].integer) })

    /// Each channel's last event sequence.
    static let channelSequences = TableDescription<SequenceRow>(
        name: "channel_sequences",
        columns: [
            .init("cid", .text) { .text($0.cid.description) },
            .init("last_seq", .integer) { .integer($0.lastSeq) },
        ],
        primaryKey: ["cid"],
        decode: { (row) throws(StorageError) in (try cid(row["cid"].text), try row["last_seq"].integer) })

    /// Journal entries (their events are rows of ``journalEvents``). From schema v6 a `send_message`
    /// whose message is stored in the same commit is written without its text, and `message_position`
    /// says which message holds it (``JournalEntry/messagePosition``). From schema v12 (SQLite v10)
    /// each has its stream and its number there (entries from before are the cluster stream's,
    /// numbered as in the journal).
    static let journal = TableDescription<JournalEntry>(
        name: "journal",
        columns: [
            .init("seq", .integer) { .integer($0.seq) },
            .init("at", .integer) { .integer($0.at.rawValue) },
            .init("command", .text) { .textBytes(CommandCodec.encode($0.storedCommand)) },
            .init("message_position", .integer, nullable: true) { .integer($0.messagePosition.map(Int64.init)) },
            .init("stream", .integer) { .integer(Int64($0.stream.rawValue)) },
            .init("stream_seq", .integer) { .integer($0.streamSeq) },
        ],
        primaryKey: ["seq"],
        decode: { (row) throws(StorageError) in
            let text = try row["command"].text
            let command: ReceiptsCommand
            do { command = try CommandCodec.decode(Array(text.utf8)) } catch { throw .corrupt(path: "", reason: "journal command: \(error)") }
            return JournalEntry(seq: try row["seq"].integer, stream: try stream(row["stream"].integer), streamSeq: try row["stream_seq"].integer,
                                at: Timestamp(rawValue: try row["at"].integer), command: command, events: [],
                                messagePosition: try row["message_position"].optionalInteger.map { Int($0) })
        })

    /// Journal events. From schema v6, an event whose message object is kept once in ``messages``
    /// (``JournaledMessage``) is written without it, and `message_position`, `message_at` and
    /// `message_bytes` say which message it was and where it goes; they are NULL for whole events.
    /// From schema v13 (SQLite v11), an event whose channel object is kept once in ``journalChannels``
    /// (``JournaledChannel``) is written without it, and `channel_since`, `channel_at` and
    /// `channel_bytes` say which object and where it goes.
    static let journalEvents = TableDescription<JournalEventRow>(
        name: "journal_events",
        columns: [
            .init("seq", .integer) { .integer($0.event.seq) },
            .init("command_seq", .integer) { .integer($0.commandSeq) },
            .init("cid", .text, nullable: true) { .text($0.event.cid?.description) },
            .init("channel_seq", .integer, nullable: true) { .integer($0.event.channelSeq) },
            .init("type", .text) { .text($0.event.type) },
            .init("payload", .text) { .textBytes($0.payload) },
            .init("audience", .text, nullable: true) { .text($0.event.audience?.storedValue) },
            .init("message_position", .integer, nullable: true) { .integer($0.storedMessage.map { Int64($0.position) }) },
            .init("message_at", .integer, nullable: true) { .integer($0.storedMessage.map { Int64($0.offset) }) },
            .init("message_bytes", .integer, nullable: true) { .integer($0.storedMessage.map { Int64($0.length) }) },
            .init("channel_since", .integer, nullable: true) { .integer($0.storedChannel?.since) },
            .init("channel_at", .integer, nullable: true) { .integer($0.storedChannel.map { Int64($0.offset) }) },
            .init("channel_bytes", .integer, nullable: true) { .integer($0.storedChannel.map { Int64($0.length) }) },
        ],
        primaryKey: ["seq"],
        decode: { (row) throws(StorageError) in
            var message: JournaledMessage?
            if let position = try row["message_position"].optionalInteger {
                guard let offset = try row["message_at"].optionalInteger, let length = try row["message_bytes"].optionalInteger else {
                    throw .corrupt(path: "", reason: "a journaled event's message at position \(position) without its place")
                }
                message = JournaledMessage(position: Int(position), offset: Int(offset), length: Int(length))
            }
            var channel: JournaledChannel?
            if let since = try row["channel_since"].optionalInteger {
                guard let offset = try row["channel_at"].optionalInteger, let length = try row["channel_bytes"].optionalInteger else {
                    throw .corrupt(path: "", reason: "a journaled event's channel object \(since) without its place")
                }
                channel = JournaledChannel(since: since, offset: Int(offset), length: Int(length))
            }
            let event = JournalEvent(
                seq: try row["seq"].integer, cid: try row["cid"].optionalText.flatMap(ChannelCID.init),
                channelSeq: try row["channel_seq"].optionalInteger, type: try row["type"].text,
                audience: try row["audience"].optionalText.flatMap(EventAudience.init(storedValue:)),
                json: Array(try row["payload"].text.utf8), message: message, channel: channel)
            return JournalEventRow(commandSeq: try row["command_seq"].integer, read: event)
        })

    /// The channel objects the journal keeps once (``JournaledChannel``), by channel and the
    /// `channel_seq` of the first event that carried them (from schema v13, SQLite v11).
    static let journalChannels = TableDescription<ChannelObjectRow>(
        name: "journal_channels",
        columns: [
            .init("cid", .text) { .text($0.cid.description) },
            .init("since", .integer) { .integer($0.since) },
            .init("object", .text) { .textBytes($0.object) },
        ],
        primaryKey: ["cid", "since"],
        decode: { (row) throws(StorageError) in
            (try cid(row["cid"].text), try row["since"].integer, Array(try row["object"].text.utf8))
        })

    /// The durable state tables, for checks that cover all of them.
    static let all: [(name: String, columns: [(name: String, type: ColumnType, nullable: Bool)], primaryKey: [String])] = [
        shape(users), shape(channelTypes), shape(channels), shape(members), shape(messages), shape(messageEdits), shape(reactions), shape(threadReads), shape(threads),
        shape(counters), shape(channelSequences), shape(journal), shape(journalEvents), shape(journalChannels),
    ]

    /// The tables only SQLite has in this shape (its passes in the order written, by row id).
    static let sqliteOnly: [(name: String, columns: [(name: String, type: ColumnType, nullable: Bool)], primaryKey: [String])] = [
        shape(pointerPasses),
    ]

    /// The tables only PostgreSQL has in this shape (its passes keyed by their ordinals).
    static let postgresOnly: [(name: String, columns: [(name: String, type: ColumnType, nullable: Bool)], primaryKey: [String])] = [
        shape(postgresPointerPasses),
    ]

    private static func shape<Row>(_ table: TableDescription<Row>) -> (name: String, columns: [(name: String, type: ColumnType, nullable: Bool)], primaryKey: [String]) {
        (table.name, table.columns.map { ($0.name, $0.type, $0.nullable) }, table.primaryKey)
    }

    static func stream(_ number: Int64) throws(StorageError) -> JournalStream {
        guard let stream = JournalStream(rawValue: Int(number)) else { throw .corrupt(path: "", reason: "invalid journal stream \(number)") }
        return stream
    }

    static func cid(_ text: String) throws(StorageError) -> ChannelCID {
        guard let cid = ChannelCID(text) else { throw .corrupt(path: "", reason: "invalid cid \(text)") }
        return cid
    }
}
