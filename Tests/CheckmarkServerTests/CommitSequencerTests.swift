import CheckmarkCore
import CheckmarkStorage
import CheckmarkWire
import Testing

@testable import CheckmarkServer

/// Transcripts of the commit sequencer: inputs, then the actions it returns, written as short strings
/// (`write(e1)`, `reply(a)`, `fail(a)`, `fanOut(x)`, `cycle(lock)`, `run(w1)`, ...). Entries, events,
/// tokens and work are plain strings: no engine, no storage, no event loop.
private typealias Sequencer = CommitSequencer<String, String, String, String>

private func transcript(_ actions: [Sequencer.Action]) -> [String] {
    actions.map { action in
        switch action {
        case .run(let work): "run(\(work.joined(separator: ",")))"
        case .write(let entries): "write(\(entries.joined(separator: ",")))"
        case .cycle(let lock): lock == .none ? "cycle" : "cycle(\(lock))"
        case .reply(let token, .durable): "reply(\(token))"
        case .reply(let token, .failed): "fail(\(token))"
        case .fanOut(let events): "fanOut(\(events.joined(separator: ",")))"
        case .storageFailed: "storageFailed"
        case .drained: "drained"
        case .fatal: "fatal"
        }
    }
}

private let diskFull = StorageError.commitFailed(reason: "disk full")

private func isStorage(_ error: ServiceError?) -> Bool {
    if case .storage = error { true } else { false }
}

private func isShuttingDown(_ error: ServiceError?) -> Bool {
    if case .shuttingDown = error { true } else { false }
}

@Suite("Replies and events are released when durable, in apply order")
struct CommitSequencerReleaseTests {
    @Test func aCommandIsAnsweredOnlyAfterItsBatchIsDurable() {
        var sequencer = Sequencer(mode: .local)
        #expect(transcript(sequencer.applied(entry: "e1", events: ["x"], token: "a")) == ["write(e1)"])
        #expect(transcript(sequencer.batchCommitted()) == ["reply(a)", "fanOut(x)"])
    }

    @Test func eachReplyComesBeforeItsEventsAndItemsInApplyOrder() {
        var sequencer = Sequencer(mode: .local)
        _ = sequencer.applied(entry: "e1", events: ["x1"], token: "a")
        #expect(sequencer.applied(entry: "e2", events: ["x2", "y2"], token: "b").isEmpty)
        #expect(sequencer.applied(entry: nil, events: [], token: "c").isEmpty)
        #expect(sequencer.applied(entry: "e3", events: ["x3"], token: "d").isEmpty)
        #expect(transcript(sequencer.batchCommitted()) == ["write(e2,e3)", "reply(a)", "fanOut(x1)"])
        #expect(transcript(sequencer.batchCommitted()) == ["reply(b)", "fanOut(x2,y2)", "reply(c)", "reply(d)", "fanOut(x3)"])
    }

    @Test func anItemWithNothingToStoreIsReleasedAtOnceWhenNothingIsInFlight() {
        var sequencer = Sequencer(mode: .local)
        #expect(transcript(sequencer.applied(entry: nil, events: ["x"], token: "a")) == ["reply(a)", "fanOut(x)"])
    }
}

@Suite("A query waits for every command applied before it")
struct CommitSequencerQueryTests {
    @Test func aQueryAfterAnUncommittedCommandWaitsForItsBatch() {
        var sequencer = Sequencer(mode: .local)
        _ = sequencer.applied(entry: "e1", events: [], token: "a")
        #expect(sequencer.applied(entry: nil, events: [], token: "q").isEmpty)
        #expect(transcript(sequencer.batchCommitted()) == ["reply(a)", "reply(q)"])
    }

    @Test func aQueryWaitsForCommandsOfTheNextBatchToo() {
        var sequencer = Sequencer(mode: .local)
        _ = sequencer.applied(entry: "e1", events: [], token: "a")
        _ = sequencer.applied(entry: "e2", events: [], token: "b")
        _ = sequencer.applied(entry: nil, events: [], token: "q")
        #expect(transcript(sequencer.batchCommitted()) == ["write(e2)", "reply(a)"])
        #expect(transcript(sequencer.batchCommitted()) == ["reply(b)", "reply(q)"])
    }

    @Test func aQueryWithEverythingDurableIsAnsweredAtOnce() {
        var sequencer = Sequencer(mode: .local)
        _ = sequencer.applied(entry: "e1", events: [], token: "a")
        _ = sequencer.batchCommitted()
        #expect(transcript(sequencer.applied(entry: nil, events: [], token: "q")) == ["reply(q)"])
    }
}

@Suite("Commands applied while a batch is written form the next batch")
struct CommitSequencerGroupCommitTests {
    @Test func commandsAppliedDuringAWriteAreWrittenTogether() {
        var sequencer = Sequencer(mode: .local)
        #expect(transcript(sequencer.applied(entry: "e1", events: [], token: "a")) == ["write(e1)"])
        for (entry, token) in [("e2", "b"), ("e3", "c"), ("e4", "d")] {
            #expect(sequencer.applied(entry: entry, events: [], token: token).isEmpty)
        }
        #expect(transcript(sequencer.batchCommitted()) == ["write(e2,e3,e4)", "reply(a)"])
        #expect(transcript(sequencer.batchCommitted()) == ["reply(b)", "reply(c)", "reply(d)"])
    }

    @Test func theNextBatchIsHandedToTheWriterBeforeTheDurableOneIsAnswered() {
        var sequencer = Sequencer(mode: .local)
        _ = sequencer.applied(entry: "e1", events: ["x1"], token: "a")
        _ = sequencer.applied(entry: nil, events: [], token: "q")
        _ = sequencer.applied(entry: "e2", events: ["x2"], token: "b")
        _ = sequencer.applied(entry: nil, events: [], token: "r")
        // Everything e1's batch released was applied before e2: the write cannot hold anything answered.
        #expect(transcript(sequencer.batchCommitted()) == ["write(e2)", "reply(a)", "fanOut(x1)"])
        #expect(transcript(sequencer.batchCommitted()) == ["reply(q)", "reply(b)", "fanOut(x2)", "reply(r)"])
    }

    @Test func withNoNextWriteQueriesAndTheDrainFollowTheDurableItems() {
        var sequencer = Sequencer(mode: .local)
        _ = sequencer.applied(entry: "e1", events: [], token: "a")
        _ = sequencer.applied(entry: nil, events: [], token: "q")
        #expect(sequencer.drainRequested().isEmpty)
        #expect(transcript(sequencer.batchCommitted()) == ["reply(a)", "reply(q)", "drained"])
    }

    @Test func onlyOneBatchIsInFlightAtATime() {
        var sequencer = Sequencer(mode: .local)
        _ = sequencer.applied(entry: "e1", events: [], token: "a")
        #expect(sequencer.committing)
        #expect(sequencer.applied(entry: "e2", events: [], token: "b").isEmpty)
        #expect(transcript(sequencer.batchCommitted()) == ["write(e2)", "reply(a)"])
        #expect(sequencer.committing)
        _ = sequencer.batchCommitted()
        #expect(!sequencer.committing)
    }

    @Test func workRunsAtOnceOnASingleNode() {
        var sequencer = Sequencer(mode: .local)
        #expect(sequencer.runsWorkAtOnce)
        #expect(transcript(sequencer.enqueue("w1", lock: .exclusive)) == ["run(w1)"])
    }

    @Test func runsWorkAtOnceSaysWhatEnqueueDoes() {
        // The service runs work without enqueueing it when this says so: it must match enqueue.
        var cluster = Sequencer(mode: .cluster)
        #expect(!cluster.runsWorkAtOnce)
        #expect(transcript(cluster.enqueue("w1", lock: .exclusive)) == ["cycle(exclusive)"])
        _ = cluster.batchFailed(diskFull)
        #expect(cluster.runsWorkAtOnce)
        #expect(transcript(cluster.enqueue("w2", lock: .exclusive)) == ["run(w2)"])
    }
}

@Suite("A failed write fails everything waiting and refuses what follows")
struct CommitSequencerFailureTests {
    @Test func everyUnreleasedItemFailsInOrderThenTheFailureIsReported() {
        var sequencer = Sequencer(mode: .local)
        _ = sequencer.applied(entry: "e1", events: ["x1"], token: "a")
        _ = sequencer.applied(entry: "e2", events: ["x2"], token: "b")
        _ = sequencer.applied(entry: nil, events: [], token: "q")
        #expect(transcript(sequencer.batchFailed(diskFull))
            == ["storageFailed", "fail(a)", "fail(b)", "fail(q)", "drained", "fatal"])
    }

    @Test func laterCommandsAndDisconnectsAreRefusedWithTheStorageError() {
        var sequencer = Sequencer(mode: .local)
        _ = sequencer.applied(entry: "e1", events: [], token: "a")
        _ = sequencer.batchFailed(diskFull)
        #expect(isStorage(sequencer.admission(isDisconnect: false)))
        #expect(isStorage(sequencer.admission(isDisconnect: true)))
        #expect(!sequencer.accepting)
        #expect(sequencer.failure != nil)
    }

    @Test func aFailedClusterCycleRunsItsUnrunAndQueuedWorkSoItFails() {
        var sequencer = Sequencer(mode: .cluster)
        #expect(transcript(sequencer.enqueue("w1", lock: .exclusive)) == ["cycle(exclusive)"])
        #expect(sequencer.enqueue("w2", lock: .none).isEmpty)
        #expect(transcript(sequencer.batchFailed(diskFull)) == ["storageFailed", "drained", "fatal", "run(w1,w2)"])
        #expect(transcript(sequencer.enqueue("w3", lock: .exclusive)) == ["run(w3)"])
        #expect(sequencer.catchUpRequested().isEmpty)
    }

    /// Issue 45: a read that came back from storage after a cluster node's failure waited for a
    /// cycle that never came, and the drain of SIGTERM waited for it forever.
    @Test func anItemAppliedAfterTheFailureFailsAtOnceAndTheDrainCompletes() {
        for mode in [Sequencer.Mode.local, .cluster] {
            var sequencer = Sequencer(mode: mode)
            _ = sequencer.enqueue("w1", lock: .exclusive)
            _ = sequencer.applied(entry: "e1", events: [], token: "a")
            if mode == .cluster { _ = sequencer.cycleApplied() }
            _ = sequencer.batchFailed(diskFull)
            #expect(transcript(sequencer.applied(entry: nil, events: ["x"], token: "late")) == ["fail(late)"])
            #expect(transcript(sequencer.applied(entry: "e2", events: [], token: "run")) == ["fail(run)"])
            #expect(transcript(sequencer.drainRequested()) == ["drained"])
        }
    }

    @Test func workAlreadyRunInAFailedCycleIsNotRunAgain() {
        var sequencer = Sequencer(mode: .cluster)
        _ = sequencer.enqueue("w1", lock: .exclusive)
        #expect(sequencer.takeCycleWork() == ["w1"])
        _ = sequencer.applied(entry: "e1", events: [], token: "a")
        #expect(sequencer.cycleApplied() == ["e1"])
        #expect(transcript(sequencer.batchFailed(diskFull)) == ["storageFailed", "fail(a)", "drained", "fatal"])
    }
}

@Suite("Draining completes after the last durable commit and lets disconnects through")
struct CommitSequencerDrainTests {
    @Test func drainingWhenIdleCompletesAtOnce() {
        var sequencer = Sequencer(mode: .local)
        #expect(transcript(sequencer.drainRequested()) == ["drained"])
        #expect(isShuttingDown(sequencer.admission(isDisconnect: false)))
        #expect(sequencer.admission(isDisconnect: true) == nil)
    }

    @Test func drainWaitsForEveryBatchIncludingDisconnectsAppliedMeanwhile() {
        var sequencer = Sequencer(mode: .local)
        _ = sequencer.applied(entry: "e1", events: [], token: "a")
        #expect(sequencer.drainRequested().isEmpty)
        #expect(isShuttingDown(sequencer.admission(isDisconnect: false)))
        #expect(sequencer.admission(isDisconnect: true) == nil)
        #expect(sequencer.applied(entry: "bye", events: ["gone"], token: "d").isEmpty)
        #expect(transcript(sequencer.batchCommitted()) == ["write(bye)", "reply(a)"])
        #expect(transcript(sequencer.batchCommitted()) == ["reply(d)", "fanOut(gone)", "drained"])
    }

    @Test func aClusterDrainWaitsForQueuedWork() {
        var sequencer = Sequencer(mode: .cluster)
        _ = sequencer.enqueue("w1", lock: .exclusive)
        _ = sequencer.enqueue("w2", lock: .exclusive)
        #expect(sequencer.drainRequested().isEmpty)
        _ = sequencer.takeCycleWork()
        _ = sequencer.cycleApplied()
        #expect(transcript(sequencer.batchCommitted()) == ["cycle(exclusive)"])
        #expect(sequencer.takeCycleWork() == ["w2"])
        _ = sequencer.cycleApplied()
        #expect(transcript(sequencer.batchCommitted()) == ["drained"])
    }
}

@Suite("Cluster cycles: one at a time, catch-up and queued work together, the lock only when needed")
struct CommitSequencerClusterTests {
    @Test func workWaitsForACycleAndIsReleasedWhenTheCycleCommits() {
        var sequencer = Sequencer(mode: .cluster)
        #expect(transcript(sequencer.enqueue("w1", lock: .exclusive)) == ["cycle(exclusive)"])
        #expect(sequencer.takeCycleWork() == ["w1"])
        #expect(sequencer.applied(entry: "e1", events: ["x"], token: "a").isEmpty)
        #expect(sequencer.cycleApplied() == ["e1"])
        #expect(transcript(sequencer.batchCommitted()) == ["reply(a)", "fanOut(x)"])
    }

    @Test func workQueuedDuringACycleRunsInTheNextOneInOrder() {
        var sequencer = Sequencer(mode: .cluster)
        _ = sequencer.enqueue("w1", lock: .none)
        #expect(sequencer.enqueue("w2", lock: .none).isEmpty)
        #expect(sequencer.enqueue("w3", lock: .exclusive).isEmpty)
        #expect(sequencer.takeCycleWork() == ["w1"])
        _ = sequencer.cycleApplied()
        #expect(transcript(sequencer.batchCommitted()) == ["cycle(exclusive)"])
        #expect(sequencer.takeCycleWork() == ["w2", "w3"])
    }

    @Test func readsAndWatchesAloneRunWithoutTheAppendLock() {
        var sequencer = Sequencer(mode: .cluster)
        #expect(transcript(sequencer.enqueue("read", lock: .none)) == ["cycle"])
    }

    /// Issue 45: owners' commits of their own shards hold the lock shared, side by side; a cycle
    /// with any other command that changes state holds it alone.
    @Test func aCycleHoldsTheLockAsTheMostDemandingOfItsWorkNeeds() {
        var sequencer = Sequencer(mode: .cluster)
        #expect(transcript(sequencer.enqueue("read", lock: .none)) == ["cycle"])
        #expect(sequencer.enqueue("owned1", lock: .shared).isEmpty)
        #expect(sequencer.enqueue("owned2", lock: .shared).isEmpty)
        _ = sequencer.takeCycleWork()
        _ = sequencer.cycleApplied()
        #expect(transcript(sequencer.batchCommitted()) == ["cycle(shared)"])
        #expect(sequencer.enqueue("user", lock: .exclusive).isEmpty)
        #expect(sequencer.enqueue("owned3", lock: .shared).isEmpty)
        #expect(sequencer.takeCycleWork() == ["owned1", "owned2"])
        _ = sequencer.cycleApplied()
        #expect(transcript(sequencer.batchCommitted()) == ["cycle(exclusive)"])
        #expect(sequencer.takeCycleWork() == ["user", "owned3"])
        _ = sequencer.cycleApplied()
        #expect(transcript(sequencer.batchCommitted()).isEmpty)
    }

    @Test func aCatchUpAloneRunsACycleWithoutWork() {
        var sequencer = Sequencer(mode: .cluster)
        #expect(transcript(sequencer.catchUpRequested()) == ["cycle"])
        #expect(sequencer.takeCycleWork().isEmpty)
        #expect(sequencer.cycleApplied().isEmpty)
        #expect(sequencer.batchCommitted().isEmpty)
    }

    @Test func aCatchUpDuringACycleJoinsTheNextCycleWithTheQueuedWork() {
        var sequencer = Sequencer(mode: .cluster)
        _ = sequencer.enqueue("w1", lock: .exclusive)
        #expect(sequencer.catchUpRequested().isEmpty)
        #expect(sequencer.enqueue("w2", lock: .none).isEmpty)
        _ = sequencer.takeCycleWork()
        _ = sequencer.cycleApplied()
        // One cycle does both: the driver catches up first, then runs w2.
        #expect(transcript(sequencer.batchCommitted()) == ["cycle"])
        #expect(sequencer.takeCycleWork() == ["w2"])
        _ = sequencer.cycleApplied()
        #expect(sequencer.batchCommitted().isEmpty)
    }

    @Test func aCycleReleasesItsItemsBeforeStartingTheNext() {
        var sequencer = Sequencer(mode: .cluster)
        _ = sequencer.enqueue("w1", lock: .exclusive)
        _ = sequencer.takeCycleWork()
        _ = sequencer.applied(entry: "e1", events: [], token: "a")
        _ = sequencer.applied(entry: nil, events: [], token: "q")
        _ = sequencer.cycleApplied()
        #expect(sequencer.enqueue("w2", lock: .exclusive).isEmpty)
        #expect(transcript(sequencer.batchCommitted()) == ["reply(a)", "reply(q)", "cycle(exclusive)"])
    }
}
