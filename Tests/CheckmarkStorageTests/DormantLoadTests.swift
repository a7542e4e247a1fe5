import CheckmarkCore
import CheckmarkStorage
import CheckmarkTestSupport
import Testing

/// Issue 44: a start can leave every channel in storage (``ReceiptsStore/loadDormant()``) and load
/// each alone when first needed (``ReceiptsStore/loadChannel(_:messageWindow:)``). The engine made
/// that way has the totals and memberships of a full load at once, the same channels once they are
/// installed, and commits made after it load back identically.
@Suite("Dormant load")
struct DormantLoadTests {
    /// A store holding a history of every kind of command (``StoredUnreadCountsTests/History``),
    /// and the engine that made it.
    static func stored(_ kind: StoreKind, seed: UInt64) throws -> (location: TestStoreLocation, engine: ReceiptsEngine, history: StoredUnreadCountsTests.History, seq: Int64, now: Int64) {
        let location = try kind.makeLocation()
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        var now: Int64 = 1_763_000_000_000_000
        var history = StoredUnreadCountsTests.History(state: seed)
        let store = try location.open()
        defer { store.close() }
        try StorageRoundTripTests.applyAndCommit(StorageRoundTripTests.history, to: store, engine: &engine, seq: &seq)
        try StoredUnreadCountsTests.setUp(store, engine: &engine, seq: &seq)
        try StoredUnreadCountsTests.run(&history, count: 150, store: store, engine: &engine, seq: &seq, now: &now)
        return (location, engine, history, seq, now)
    }

    @Test(arguments: StoreKind.available) func aDormantLoadHasTheTotalsAndMembershipsOfAFullOne(kind: StoreKind) throws {
        for seed: UInt64 in [3, 11, 29] {
            let (location, engine, _, _, _) = try Self.stored(kind, seed: seed &* 0x9E37_79B9_7F4A_7C15)
            defer { location.remove() }
            let store = try location.open()
            defer { store.close() }
            let full = try store.load()
            let dormant = try store.loadDormant()
            #expect(dormant.snapshot.channels.isEmpty)
            #expect(dormant.snapshot.dormantChannels == engine.snapshot().channels.map(DormantChannel.init(of:)), "seed \(seed)")
            #expect(dormant.lastSeq == full.lastSeq && dormant.lastEventSeq == full.lastEventSeq && dormant.channelSeqs == full.channelSeqs)
            let lazy = ReceiptsEngine(restoring: dormant.snapshot)
            let restored = ReceiptsEngine(restoring: full.snapshot)
            #expect(lazy.totals == restored.totals && lazy.membership == restored.membership, "seed \(seed)")
            for user in engine.users.values { #expect(lazy.counts(for: user.id) == engine.counts(for: user.id), "seed \(seed), \(user.id)") }
            #expect(lazy.users.count == engine.users.count && lazy.channelTypes == engine.channelTypes)
        }
    }

    @Test(arguments: StoreKind.available) func aChannelLoadedAloneIsTheChannelAFullLoadGives(kind: StoreKind) throws {
        let (location, engine, _, _, _) = try Self.stored(kind, seed: 0x1234_5678_9ABC_DEF1)
        defer { location.remove() }
        let store = try location.open()
        defer { store.close() }
        var lazy = ReceiptsEngine(restoring: try store.loadDormant().snapshot)
        for cid in engine.channels.keys.sorted() {
            let channel = try #require(try store.loadChannel(cid, messageWindow: .max))
            let installed = lazy.install(channel)
            #expect(installed)
        }
        #expect(lazy.dormantChannels.isEmpty)
        #expect(fingerprint(lazy) == fingerprint(engine))
        #expect(try store.loadChannel(ChannelCID(type: "messaging", id: "nowhere"), messageWindow: .max) == nil)
        // The window: only the newest texts held, as a full load with it holds them.
        let windowed = try #require(try store.loadChannel(StoredUnreadCountsTests.cids[0], messageWindow: 2))
        #expect(windowed.messages.indices.map { windowed.messages.holdsText(at: $0) } == windowed.messages.indices.map { $0 >= windowed.messages.count - 2 })
    }

    /// Commits after a dormant start (channels installed as commands need them) write exactly what
    /// they would have: the pointer passes of a channel loaded alone are appended after its stored
    /// ones, not written twice.
    @Test(arguments: StoreKind.available) func commitsAfterADormantStartLoadBackIdentically(kind: StoreKind) throws {
        var (location, engine, history, seq, now) = try Self.stored(kind, seed: 0xFEED_FACE_CAFE_BEEF)
        defer { location.remove() }
        var lazy: ReceiptsEngine
        do {
            let store = try location.open()
            defer { store.close() }
            lazy = ReceiptsEngine(restoring: try store.loadDormant().snapshot)
            var entries: [JournalEntry] = []
            var footprint = StateFootprint()
            for number in 0..<150 {
                now += 1_000_000
                let command = history.command(in: engine, number: 900_000 + number)
                let time = Timestamp(rawValue: now)
                var result = lazy.apply(command, at: time)
                if case .failure(.channelsNotLoaded(let cids)) = result {
                    for cid in cids {
                        let installed = lazy.install(try #require(try store.loadChannel(cid, messageWindow: .max)))
                        #expect(installed)
                    }
                    result = lazy.apply(command, at: time)
                }
                #expect(result == engine.apply(command, at: time), "\(command)")
                _ = engine.takeFootprint()
                if case .success(let outcome) = result, outcome.changed, ReceiptsEngine.isDurable(command) {
                    seq += 1
                    entries.append(JournalEntry(seq: seq, at: lazy.clock, command: command, events: []))
                }
                lazy.takeFootprint(into: &footprint)
                if number % 5 == 4 {
                    let batch = CommitBatch(entries: entries, footprint: footprint, engine: lazy)
                    try store.commit(batch)
                    lazy.markMessagesDurable(batch.storedMessageCounts)
                    entries = []
                    footprint = StateFootprint()
                }
            }
        }
        let store = try location.open()
        defer { store.close() }
        #expect(fingerprint(ReceiptsEngine(restoring: try store.load().snapshot)) == fingerprint(engine))
        #expect(!lazy.channels.isEmpty)
    }

    @Test(arguments: StoreKind.available) func storageTellsWhichChannelsHoldAMessageWithoutLoadingThem(kind: StoreKind) throws {
        let (location, engine, _, _, _) = try Self.stored(kind, seed: 7)
        defer { location.remove() }
        let store = try location.open()
        defer { store.close() }
        let cids = engine.channels.keys.sorted()
        var looked = 0
        for channel in engine.channels.values where channel.messages.count > 0 {
            for position in Set([0, channel.messages.count / 2, channel.messages.count - 1]) {
                let id = channel.messages.id(at: position)
                let expected = cids.filter { engine.channels[$0]!.messages.position(of: id) != nil }
                #expect(try store.channels(holdingMessage: id) == expected, "\(id)")
                looked += 1
            }
        }
        #expect(looked > 3)
        #expect(try store.channels(holdingMessage: "never-sent") == [])
    }
}
