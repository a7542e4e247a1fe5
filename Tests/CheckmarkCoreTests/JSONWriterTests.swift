import CheckmarkCore
import Testing

@Suite("JSON writer: numbers and nesting as JSON spells them")
struct JSONWriterTests {
    @Test(arguments: [0, 7, -7, 10, 99, 100, -100, 1_234_567_890, Int.max, Int.min, Int.min + 1])
    func integersAreWrittenAsTheirDecimalText(value: Int) {
        var writer = JSONWriter()
        writer.int(value)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == String(value))
    }

    @Test func integralNumbersAreWrittenWithoutAFraction() {
        var writer = JSONWriter()
        writer.value(.array([.number(-42), .number(9_007_199_254_740_991), .number(0.5)]))
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[-42,9007199254740991,0.5]")
    }

    /// Each level holds a value before and after the nested one, and the whole is followed by one
    /// more element, so a comma lost or doubled on the way back out (past the 64 levels the writer
    /// keeps in one word) makes text that does not parse back to the same value.
    @Test(arguments: [1, 63, 64, 65, 130])
    func valuesAroundNestedContainersAreSeparatedAtEveryDepth(depth: Int) throws {
        var value = JSONValue.string("core")
        for level in 0..<depth {
            value = level.isMultiple(of: 2)
                ? .array([.number(Double(level)), value, .bool(true)])
                : .object([("before", .null), ("inner", value), ("after", .number(Double(level)))])
        }
        var writer = JSONWriter()
        writer.beginArray()
        writer.value(value)
        writer.value(.string("next"))
        writer.endArray()
        #expect(try JSONParser.parse(writer.bytes, limits: JSONLimits(maxDepth: depth + 3)) == .array([value, .string("next")]))
    }
}
