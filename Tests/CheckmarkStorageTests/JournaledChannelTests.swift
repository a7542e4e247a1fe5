import CheckmarkCore
@testable import CheckmarkStorage
import CheckmarkTestSupport
import Foundation
import GRDB
import Testing

/// Issue 45 (one node unchanged): a channel object is stored once for the events that carry the same
/// bytes. A `notification.mark_read` of a channel read is journaled without its channel object, which
/// a `journal_channels` row keyed by the first event that carried it holds (``JournaledChannel``); the
/// event is read back whole, and retention removes the objects no event left refers to.
@Suite("Journal: a channel event refers to its stored channel object")
struct JournaledChannelTests {
    static let general = StorageRoundTripTests.general
    static let prefix = #"{"type":"notification.mark_read","cid":"messaging:general","user":{"id":"bob"},"channel":"#
    static let suffix = "}"
    static let first = #"{"id":"general","member_count":3,"config":{"read_events":true}}"#
    static let second = #"{"id":"general","member_count":4,"config":{"read_events":true}}"#

    static func whole(_ object: String) -> [UInt8] { Array((prefix + object + suffix).utf8) }

    static func reference(_ object: String, since: Int64) -> JournaledChannel {
        JournaledChannel(since: since, offset: prefix.utf8.count, length: object.utf8.count)
    }

    /// Commits the round-trip history's first 7 commands (channel `general`), then one entry per given
    /// event, each in `general` with channel sequences 1, 2, ...
    static func commit(_ events: [(object: String, since: Int64)], to store: any ReceiptsStore) throws {
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        try StorageRoundTripTests.applyAndCommit(Array(StorageRoundTripTests.history.prefix(7)), to: store, engine: &engine, seq: &seq)
        for (index, event) in events.enumerated() {
            seq += 1
            let journaled = JournalEvent(seq: Int64(index + 1), cid: general, channelSeq: Int64(index + 1), type: "notification.mark_read",
                                         audience: .user("bob"), json: whole(event.object), channel: reference(event.object, since: event.since))
            let entry = JournalEntry(seq: seq, at: Timestamp(rawValue: seq), command: .markRead(cid: general, userID: "bob", messageID: nil),
                                     events: [journaled])
            try store.commit(CommitBatch(entries: [entry], footprint: StateFootprint(), engine: engine))
        }
    }

    /// The rows of `journal_channels` and the payload bytes of the journal's events, when the store is SQLite.
    static func stored(_ location: TestStoreLocation) throws -> (objects: Int, payloadBytes: Int)? {
        guard case .sqlite(let directory) = location else { return nil }
        let queue = try DatabaseQueue(path: directory.path + "/checkmark.sqlite")
        defer { try? queue.close() }
        return try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM journal_channels") ?? 0,
             try Int.fetchOne(db, sql: "SELECT coalesce(sum(length(payload)), 0) FROM journal_events WHERE cid IS NOT NULL") ?? 0)
        }
    }

    @Test(arguments: StoreKind.available) func eventsCarryingTheSameObjectStoreItOnceAndReadBackWhole(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        try Self.commit([(Self.first, 1), (Self.first, 1), (Self.second, 3)], to: store)
        let events = try store.channelEvents(Self.general, after: 0, through: 3, limit: 10, maxBytes: .max)
        #expect(events.map(\.json) == [Self.whole(Self.first), Self.whole(Self.first), Self.whole(Self.second)])
        #expect(events.map { $0.channel?.since } == [1, 1, 3], "read back with the key each refers to")
        let exported = try store.journal(after: 0, limit: 100).flatMap(\.events).filter { $0.cid == Self.general && $0.channelSeq != nil }
        #expect(exported == events, "the journal export (and a cluster's other nodes) read the same events")
        if let stored = try Self.stored(location) {
            #expect(stored.objects == 2, "one row per object, not per event")
            #expect(stored.payloadBytes == 3 * (Self.prefix + Self.suffix).utf8.count, "no event repeats its object")
        }
    }

    /// The byte budget of a replay page counts an event as sent: with its channel object.
    @Test(arguments: StoreKind.available) func aPageBudgetCountsTheChannelObject(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        try Self.commit([(Self.first, 1), (Self.first, 1)], to: store)
        let size = Self.whole(Self.first).count
        #expect(try store.channelEvents(Self.general, after: 0, through: 2, limit: 10, maxBytes: 2 * size - 1).count == 1,
                "two events fit the budget as stored, not as sent")
        #expect(try store.channelEvents(Self.general, after: 0, through: 2, limit: 10, maxBytes: 2 * size).count == 2)
    }

    /// An event whose object is not stored is a corrupt database, said as such, not a short event.
    @Test(arguments: StoreKind.available) func anEventWhoseObjectIsNotStoredIsCorrupt(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        // Its key is not its own sequence: it refers to an object no event stored.
        try Self.commit([(Self.first, 7)], to: store)
        #expect {
            _ = try store.channelEvents(Self.general, after: 0, through: 1, limit: 10, maxBytes: .max)
        } throws: { error in
            guard case StorageError.corrupt(_, let reason) = error else { return false }
            return reason.contains("channel object 7 of messaging:general")
        }
    }

    /// A reference that does not mark an object in the JSON is not trusted: the event is stored whole.
    @Test(arguments: StoreKind.available) func aReferenceThatDoesNotFitIsStoredWhole(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        try StorageRoundTripTests.applyAndCommit(Array(StorageRoundTripTests.history.prefix(7)), to: store, engine: &engine, seq: &seq)
        var off = Self.reference(Self.first, since: 1)
        off.offset += 1
        let event = JournalEvent(seq: 1, cid: Self.general, channelSeq: 1, type: "notification.mark_read", audience: .user("bob"),
                                 json: Self.whole(Self.first), channel: off)
        try store.commit(CommitBatch(entries: [JournalEntry(seq: seq + 1, at: Timestamp(rawValue: 1), command: .markRead(cid: Self.general, userID: "bob", messageID: nil),
                                                            events: [event])], footprint: StateFootprint(), engine: engine))
        let read = try store.channelEvents(Self.general, after: 0, through: 1, limit: 10, maxBytes: .max)
        #expect(read.map(\.json) == [Self.whole(Self.first)] && read.allSatisfy { $0.channel == nil })
    }

    /// Retention keeps the newest object at or before the channel's oldest event left and every newer
    /// one: the events left read back whole, the older objects go.
    @Test(arguments: StoreKind.available) func retentionRemovesTheObjectsNoEventLeftRefersTo(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        try Self.commit([(Self.first, 1), (Self.first, 1), (Self.second, 3), (Self.second, 3)], to: store)
        // Events 2-4 left: event 2 still needs the first object.
        _ = try store.prune(RetentionPolicy(maxEventsPerChannel: 3), now: Timestamp(rawValue: 100), limit: 100)
        #expect(try store.channelEvents(Self.general, after: 0, through: 4, limit: 10, maxBytes: .max).map(\.json)
            == [Self.whole(Self.first), Self.whole(Self.second), Self.whole(Self.second)])
        if let stored = try Self.stored(location) { #expect(stored.objects == 2) }
        // Event 4 left: only the second object.
        _ = try store.prune(RetentionPolicy(maxEventsPerChannel: 1), now: Timestamp(rawValue: 100), limit: 100)
        #expect(try store.channelEvents(Self.general, after: 0, through: 4, limit: 10, maxBytes: .max).map(\.json) == [Self.whole(Self.second)])
        if let stored = try Self.stored(location) { #expect(stored.objects == 1) }
        // Every event gone by age: the channel's newest object stays, for the events that refer to it next.
        _ = try store.prune(RetentionPolicy(maxAgeSeconds: 0), now: Timestamp(rawValue: 1_863_000_000_000_000), limit: 100)
        #expect(try store.channelEvents(Self.general, after: 0, through: 4, limit: 10, maxBytes: .max).isEmpty)
        if let stored = try Self.stored(location) { #expect(stored.objects == 1) }
    }
}
