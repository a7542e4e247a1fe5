import CheckmarkCore
import Foundation

/// The REST call (Stream's paths, docs/openapi.json) that makes a server apply a given command, for
/// every command that is not a connection's own (those go over the connection's socket: nil). Pure.
enum RESTForm {
    static func request(for command: ReceiptsCommand) -> (method: String, path: String, body: JSONValue?)? {
        func channel(_ cid: ChannelCID, _ suffix: String = "") -> String { "/channels/\(cid.type)/\(cid.id)\(suffix)" }
        func component(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
        }
        // A message's route, its channel named (ids are unique within a channel only).
        func messageRoute(_ id: String, in cid: ChannelCID, _ suffix: String = "") -> String {
            "/messages/\(component(id))\(suffix)?cid=\(component(cid.description))"
        }
        switch command {
        case .upsertUser(let user):
            var fields: [(String, JSONValue)] = [("id", .string(user.id))]
            if let name = user.name { fields.append(("name", .string(name))) }
            if let image = user.image { fields.append(("image", .string(image))) }
            fields += user.custom
            fields.append(("privacy_settings", .object([
                ("read_receipts", .object([("enabled", .bool(user.privacy.readReceipts))])),
                ("delivery_receipts", .object([("enabled", .bool(user.privacy.deliveryReceipts))])),
                ("typing_indicators", .object([("enabled", .bool(user.privacy.typingIndicators))])),
            ])))
            return ("POST", "/users", .object([("users", .object([(user.id, .object(fields))]))]))
        case .updateUser(let patch):
            return ("PATCH", "/users", .object([("users", .array([.object([
                ("id", .string(patch.id)), ("set", .object(patch.set)), ("unset", .array(patch.unset.map { .string($0) })),
            ])]))]))
        case .createChannelType(let type):
            return ("POST", "/channeltypes", .object([
                ("name", .string(type.name)), ("read_events", .bool(type.readEvents)), ("delivery_events", .bool(type.deliveryEvents)),
                ("typing_events", .bool(type.typingEvents)), ("custom_events", .bool(type.customEvents)),
            ]))
        case .updateChannelType(let name, let read, let delivery, let typing, let custom):
            var fields: [(String, JSONValue)] = []
            if let read { fields.append(("read_events", .bool(read))) }
            if let delivery { fields.append(("delivery_events", .bool(delivery))) }
            if let typing { fields.append(("typing_events", .bool(typing))) }
            if let custom { fields.append(("custom_events", .bool(custom))) }
            return ("PUT", "/channeltypes/\(name)", .object(fields))
        case .createChannel(let cid, let createdBy, let members):
            var data: [(String, JSONValue)] = [("members", .array(members.map { .string($0) }))]
            if let createdBy { data.append(("created_by_id", .string(createdBy))) }
            return ("POST", channel(cid, "/query"), .object([("data", .object(data))]))
        case .addMembers(let cid, let ids):
            return ("POST", channel(cid), .object([("add_members", .array(ids.map { .string($0) }))]))
        case .removeMembers(let cid, let ids):
            return ("POST", channel(cid), .object([("remove_members", .array(ids.map { .string($0) }))]))
        case .sendMessage(let cid, let userID, let draft):
            var message: [(String, JSONValue)] = [("text", .string(draft.text)), ("type", .string(draft.kind.rawValue)), ("user_id", .string(userID))]
            if let id = draft.id { message.append(("id", .string(id))) }
            if let parent = draft.parentID {
                message.append(("parent_id", .string(parent)))
                message.append(("show_in_channel", .bool(draft.showInChannel)))
            }
            if draft.silent { message.append(("silent", .bool(true))) }
            return ("POST", channel(cid, "/message"), .object([("message", .object(message))]))
        case .updateMessage(let cid, let messageID, let text, let editor):
            var message: [(String, JSONValue)] = [("text", .string(text))]
            if let editor { message.append(("user_id", .string(editor))) }
            return ("POST", messageRoute(messageID, in: cid), .object([("message", .object(message))]))
        case .deleteMessage(let cid, let messageID, let hard, let editor):
            var query = hard ? "&hard=true" : ""
            if let editor { query += "&deleted_by=\(component(editor))" }
            return ("DELETE", messageRoute(messageID, in: cid) + query, nil)
        case .sendReaction(let cid, let messageID, let userID, let type, let score, let unique):
            return ("POST", messageRoute(messageID, in: cid, "/reaction"), .object([
                ("reaction", .object([("type", .string(type)), ("score", .number(Double(score)))])),
                ("user_id", .string(userID)), ("enforce_unique", .bool(unique)),
            ]))
        case .deleteReaction(let cid, let messageID, let userID, let type):
            return ("DELETE", messageRoute(messageID, in: cid, "/reaction/\(component(type))") + "&user_id=\(component(userID))", nil)
        case .markRead(let cid, let userID, let messageID):
            var body: [(String, JSONValue)] = [("user_id", .string(userID))]
            if let messageID { body.append(("message_id", .string(messageID))) }
            return ("POST", channel(cid, "/read"), .object(body))
        case .markThreadRead(let cid, let userID, let parentID):
            return ("POST", channel(cid, "/read"), .object([("user_id", .string(userID)), ("thread_id", .string(parentID))]))
        case .markReadMany(let userID, let targets):
            var body: [(String, JSONValue)] = [("user_id", .string(userID))]
            if let targets {
                body.append(("read_by_channel", .object(targets.map { ($0.cid.description, $0.messageID.map { .string($0) } ?? .null) })))
            }
            return ("POST", "/channels/read", .object(body))
        case .markUnread(let cid, let userID, let target):
            let start: (String, JSONValue) = switch target {
            case .message(let id): ("message_id", .string(id))
            case .timestamp(let time): ("message_timestamp", .string(time.rfc3339))
            }
            return ("POST", channel(cid, "/unread"), .object([("user_id", .string(userID)), start]))
        case .markDelivered(let userID, let latest):
            return ("POST", "/channels/delivered", .object([
                ("user_id", .string(userID)),
                ("latest_delivered_messages", .array(latest.map { .object([("cid", .string($0.cid.description)), ("id", .string($0.messageID))]) })),
            ]))
        case .connect, .disconnect, .watch, .stopWatching:
            return nil
        }
    }
}
