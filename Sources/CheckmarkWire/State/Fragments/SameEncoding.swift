import CheckmarkCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether two values encode to the same JSON bytes: text compared byte for byte. Swift's `==` on
/// `String` compares by Unicode canonical equivalence, so "é" written as one character equals "e"
/// and a combining accent, though their UTF-8, and so their JSON, differ.
enum SameEncoding {
    static func text(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        // Compared as memory: a channel state's watch compares every listed message's text, and a
        // byte-by-byte loop over two UTF-8 views held the engine loop (issue 42's attack, debug build).
        var a = a
        var b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
    }

    static func text(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): text(a, b)
        default: false
        }
    }

    static func value(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        // Equal numbers write the same text (0 and -0 both as 0).
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): text(a, b)
        case (.array(let a), .array(let b)): a.count == b.count && zip(a, b).allSatisfy { value($0, $1) }
        case (.object(let a), .object(let b)): fields(a, b)
        default: false
        }
    }

    static func fields(_ a: [(String, JSONValue)], _ b: [(String, JSONValue)]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { text($0.0, $1.0) && value($0.1, $1.1) }
    }

    /// Everything of a user that Stream's user object is written from (privacy settings included,
    /// though only the own user's carries them).
    static func user(_ a: User, _ b: User) -> Bool {
        text(a.id, b.id) && text(a.name, b.name) && text(a.image, b.image) && a.privacy == b.privacy
            && a.createdAt == b.createdAt && a.updatedAt == b.updatedAt && fields(a.custom, b.custom)
    }

    static func user(_ a: User?, _ b: User?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): user(a, b)
        default: false
        }
    }

    static func readState(_ a: ReadStateView?, _ b: ReadStateView?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let a?, let b?):
            return user(a.user, b.user) && a.memberSince == b.memberSince && a.lastRead == b.lastRead
                && text(a.lastReadMessageID, b.lastReadMessageID) && a.unreadMessages == b.unreadMessages
                && text(a.firstUnreadMessageID, b.firstUnreadMessageID) && a.lastDeliveredAt == b.lastDeliveredAt
                && text(a.lastDeliveredMessageID, b.lastDeliveredMessageID)
        default: return false
        }
    }

    static func message(_ a: Message, _ b: Message) -> Bool {
        text(a.id, b.id) && text(a.cid.type, b.cid.type) && text(a.cid.id, b.cid.id) && text(a.userID, b.userID)
            && text(a.text, b.text) && a.kind == b.kind && a.createdAt == b.createdAt && text(a.parentID, b.parentID)
            && a.showInChannel == b.showInChannel && a.silent == b.silent && a.revision == b.revision
            && a.reactions.count == b.reactions.count && zip(a.reactions, b.reactions).allSatisfy(reaction)
            && a.reactionUsers.count == b.reactionUsers.count
            && a.reactionUsers.allSatisfy { id, user in b.reactionUsers[id].map { SameEncoding.user(user, $0) } ?? false }
    }

    static func reaction(_ a: Reaction, _ b: Reaction) -> Bool {
        text(a.userID, b.userID) && text(a.type, b.type) && a.score == b.score && a.createdAt == b.createdAt && a.updatedAt == b.updatedAt
    }
}
