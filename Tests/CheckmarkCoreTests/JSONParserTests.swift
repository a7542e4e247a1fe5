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

    /// Regression (issue 18): an object of 40,000 keys took seconds (each key was looked for among the
    /// previous ones). Keys past the scan limit go through a table; duplicates still keep the last value.
    @Test func largeObjectsKeepTheLastOfDuplicateKeysAndTheirOrder() throws {
        let count = 5_000
        var text = "{" + (0..<count).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        text += #","k7":"again","k4999":"last"}"#
        let parsed = try JSONParser.parse(text, limits: JSONLimits(maxKeysPerObject: count))
        let pairs = try #require(parsed.objectValue)
        #expect(pairs.count == count)
        #expect(pairs[7].0 == "k7" && pairs[7].1 == .string("again"))
        #expect(pairs.last?.1 == .string("last"))
        #expect(pairs[100].1 == .number(100))
    }

    @Test func objectPastTheKeyLimitIsRefusedNamingTheLimit() {
        let text = "{" + (0..<11).map { #""k\#($0)":1"# }.joined(separator: ",") + "}"
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(text, limits: JSONLimits(maxKeysPerObject: 10)) }
        do {
            _ = try JSONParser.parse(text, limits: JSONLimits(maxKeysPerObject: 10))
        } catch {
            #expect(error.limit == "json_max_keys")
        }
        // Duplicates do not count twice.
        let duplicates = "{" + (0..<20).map { _ in #""same":1"# }.joined(separator: ",") + "}"
        #expect(throws: Never.self) { try JSONParser.parse(duplicates, limits: JSONLimits(maxKeysPerObject: 10)) }
    }

    @Test func stringPastTheLimitIsRefusedNamingTheLimit() throws {
        let limits = JSONLimits(maxStringBytes: 8)
        #expect(try JSONParser.parse(#"["12345678"]"#, limits: limits) == .array([.string("12345678")]))
        do {
            _ = try JSONParser.parse(#"["123456789"]"#, limits: limits)
            Issue.record("a 9-byte string passed an 8-byte limit")
        } catch {
            #expect(error.limit == "json_max_string")
        }
        // Keys are strings too.
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(#"{"123456789":1}"#, limits: limits) }
    }

    @Test func nestingPastTheConfiguredDepthNamesTheLimit() {
        do {
            _ = try JSONParser.parse("[[[[1]]]]", limits: JSONLimits(maxDepth: 2))
            Issue.record("depth 4 passed a limit of 2")
        } catch {
            #expect(error.limit == "json_max_depth")
        }
    }

    @Test func textThatIsNotJSONNamesNoLimit() {
        do {
            _ = try JSONParser.parse("{\"a\":}")
        } catch {
            #expect(error.limit == nil)
        }
    }

    @Test func writerOutputParsesBack() throws {
        let value = JSONValue.object([("text", .string("line\nbreak \"quoted\" \u{1} ✓")), ("n", .number(42)), ("list", .array([.null]))])
        var writer = JSONWriter()
        writer.value(value)
        #expect(try JSONParser.parse(writer.bytes) == value)
    }
}
