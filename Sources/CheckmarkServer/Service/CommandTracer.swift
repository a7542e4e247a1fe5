import CheckmarkCore
import CheckmarkWire
import Logging

/// Observes applied commands for the trace: writes their lines to the recorder (`--trace`) and sends
/// them to the live readers (`/admin/trace`), numbered in apply order from the first traced command.
/// Does nothing, and costs nothing, while neither is there. Used on the engine loop only.
final class CommandTracer {
    private let recorder: TraceRecorder?
    private let logger: Logger
    private var subscribers: [String: TraceSubscriber] = [:]
    /// Commands applied while a trace was being taken: numbers the trace's command lines.
    private var traced: Int64 = 0

    init(recorder: TraceRecorder?, logger: Logger) {
        self.recorder = recorder
        self.logger = logger
    }

    /// `command` was applied at `at` and emitted `events` (with their channel sequences and stored
    /// encodings). A recorder that cannot write logs the failure; the command is not affected.
    func applied(_ command: ReceiptsCommand, at: Timestamp, events: [(ReceiptsEvent, SharedEvent)]) {
        guard recorder != nil || !subscribers.isEmpty else { return }
        traced += 1
        let lines = TraceRecorder.lines(
            seq: traced, command, at: at,
            events: events.map { ($0.0, $0.1.channelSeq, $0.1.encoded.stored) })
        if let failure = recorder?.write(lines) { logger.error("\(failure)") }
        for subscriber in subscribers.values { subscriber.send(lines) }
    }

    /// Starts sending `subscriber` the lines of every command applied from now on, after a first line
    /// `{"kind":"start","at":...}` that says from when.
    func add(_ subscriber: TraceSubscriber) {
        subscribers[subscriber.id] = subscriber
        var w = JSONWriter()
        w.beginObject()
        w.field("kind", "start")
        w.field("at", WallClock.now())
        w.endObject()
        subscriber.send([w.bytes])
    }

    func remove(id: String) {
        subscribers[id] = nil
    }

    /// Closes the recorder's file.
    func close() {
        recorder?.close()
    }
}
