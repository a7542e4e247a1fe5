/// An immutable value that many connections read: held once and referenced by each, instead of
/// copied into each (what an idle connection costs).
final class SharedValue<Value: Sendable>: Sendable {
    let value: Value

    init(_ value: Value) { self.value = value }
}
