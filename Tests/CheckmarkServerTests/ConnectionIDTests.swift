@testable import CheckmarkServer
import Testing

/// The `connection_id` a client gets in its first `health.check`: unguessable, and short enough to be
/// a small string (every recipient of every event carries one).
@Suite("Connection ids")
struct ConnectionIDTests {
    static let alphabet = Set("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    @Test func aConnectionIDIsFifteenDigitsAndLetters() {
        for _ in 0..<1_000 {
            let id = GatewayConnection.makeConnectionID()
            #expect(id.utf8.count == 15)
            #expect(id.utf8.allSatisfy { Self.alphabet.contains($0) }, "\(id)")
        }
    }

    @Test func connectionIDsDoNotRepeat() {
        var seen = Set<String>()
        for _ in 0..<100_000 { seen.insert(GatewayConnection.makeConnectionID()) }
        #expect(seen.count == 100_000)
    }

    /// Every character of the alphabet turns up in every position: the id carries the randomness it
    /// claims (about 89 bits), not a fixed prefix or a narrow range.
    @Test func everyPositionTakesEveryCharacter() {
        var seen = Array(repeating: Set<UInt8>(), count: 15)
        for _ in 0..<20_000 {
            for (position, character) in GatewayConnection.makeConnectionID().utf8.enumerated() {
                seen[position].insert(character)
            }
        }
        for (position, characters) in seen.enumerated() {
            #expect(characters == Self.alphabet, "position \(position): \(characters.count) of 62 characters")
        }
    }
}
