import CheckmarkCore
import Testing

@Suite("JSON parser")
struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONParser.parse(#" {"a": [1, -2.5e2, true, false, null], "s": "\u00e9\ud83d\ude00\n\"", "o": {}} "#)
        #expect(value == .object([
            ("a", .array([.number(1), .number(-250), .bool(true), .bool(false), .null])),
            ("s", .string("é😀\n\"")), ("o", .object([])),
        ]))
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\u{01}\"", "\"\\x\"", "\"\\ud800\"", "[1] 2", "tru", "{\"a\":1,}"])
    func rejectsInvalidText(text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(text) }
    }

    @Test func rejectsNestingDeeperThanTheLimit() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(deep) }
    }

    @Test func writerOutputParsesBack() throws {
        let value = JSONValue.object([("text", .string("line\nbreak \"quoted\" \u{1} ✓")), ("n", .number(42)), ("list", .array([.null]))])
        var writer = JSONWriter()
        writer.value(value)
        #expect(try JSONParser.parse(writer.bytes) == value)
    }
}
