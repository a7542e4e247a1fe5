import NIOCore
import NIOPosix

/// One value of a kind per event loop, kept on the loop's thread (a thread runs one loop, except
/// for test loops sharing a thread). Used only on the loop whose value it is.
final class LoopLocal<Value: AnyObject> {
    private final class Values {
        var byLoop: [ObjectIdentifier: Value] = [:]
    }

    private let perThread = ThreadSpecificVariable<Values>()

    /// The value of `eventLoop`, made by `make` the first time; call on that loop.
    func value(of eventLoop: any EventLoop, make: () -> Value) -> Value {
        let values: Values
        if let current = perThread.currentValue {
            values = current
        } else {
            values = Values()
            perThread.currentValue = values
        }
        let key = ObjectIdentifier(eventLoop as AnyObject)
        if let value = values.byLoop[key] { return value }
        let value = make()
        values.byLoop[key] = value
        return value
    }

    /// The value of `eventLoop` if it has one; call on that loop.
    func existing(of eventLoop: any EventLoop) -> Value? {
        perThread.currentValue?.byLoop[ObjectIdentifier(eventLoop as AnyObject)]
    }

    /// Forgets the value of `eventLoop`; the next ``value(of:make:)`` makes a new one.
    func remove(of eventLoop: any EventLoop) {
        perThread.currentValue?.byLoop[ObjectIdentifier(eventLoop as AnyObject)] = nil
    }
}
