/// Decodes a raw DEFLATE stream (RFC 1951) for tests, recording the longest back-reference distance,
/// so a test can prove a deflater kept within the window it agreed to. Small and slow on purpose.
struct DeflateStreamWalker {
    struct Malformed: Error {}

    private let bytes: [UInt8]
    private var bitPosition = 0
    private(set) var output: [UInt8] = []
    private(set) var longestDistance = 0

    /// Walks every block until the input is used up (sync-flushed streams have no final block).
    static func walk(_ bytes: [UInt8]) throws -> DeflateStreamWalker {
        var walker = DeflateStreamWalker(bytes: bytes)
        while walker.bitPosition + 3 <= walker.bytes.count * 8 {
            let final = try walker.bits(1)
            switch try walker.bits(2) {
            case 0: try walker.stored()
            case 1: try walker.huffmanBlock(literals: .fixedLiterals, distances: .fixedDistances)
            case 2:
                let (literals, distances) = try walker.dynamicTables()
                try walker.huffmanBlock(literals: literals, distances: distances)
            default: throw Malformed()
            }
            if final == 1 { break }
            // Only padding may follow the last whole block of a sync flush.
            if walker.bytes.count * 8 - walker.bitPosition < 8 { break }
        }
        return walker
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func bits(_ count: Int) throws -> Int {
        var value = 0
        for i in 0..<count {
            guard bitPosition < bytes.count * 8 else { throw Malformed() }
            let bit = Int(bytes[bitPosition >> 3] >> UInt8(bitPosition & 7)) & 1
            value |= bit << i
            bitPosition += 1
        }
        return value
    }

    private mutating func stored() throws {
        bitPosition = (bitPosition + 7) & ~7
        let length = try bits(16)
        let complement = try bits(16)
        guard length == ~complement & 0xFFFF else { throw Malformed() }
        for _ in 0..<length { output.append(UInt8(try bits(8))) }
    }

    struct Huffman {
        var counts = [Int](repeating: 0, count: 16)
        var symbols: [Int] = []

        init(lengths: [Int]) {
            for length in lengths { counts[length] += 1 }
            counts[0] = 0
            for length in 1...15 {
                for (symbol, l) in lengths.enumerated() where l == length { symbols.append(symbol) }
            }
        }

        static let fixedLiterals = Huffman(lengths: (0..<288).map { $0 < 144 ? 8 : $0 < 256 ? 9 : $0 < 280 ? 7 : 8 })
        static let fixedDistances = Huffman(lengths: [Int](repeating: 5, count: 30))
    }

    private mutating func decode(_ table: Huffman) throws -> Int {
        var code = 0
        var first = 0
        var index = 0
        for length in 1...15 {
            code |= try bits(1)
            let count = table.counts[length]
            if code - count < first { return table.symbols[index + code - first] }
            index += count
            first += count
            first <<= 1
            code <<= 1
        }
        throw Malformed()
    }

    private mutating func dynamicTables() throws -> (Huffman, Huffman) {
        let literalCount = try bits(5) + 257
        let distanceCount = try bits(5) + 1
        let codeLengthCount = try bits(4) + 4
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
        var codeLengths = [Int](repeating: 0, count: 19)
        for i in 0..<codeLengthCount { codeLengths[order[i]] = try bits(3) }
        let codeLengthTable = Huffman(lengths: codeLengths)
        var lengths: [Int] = []
        while lengths.count < literalCount + distanceCount {
            let symbol = try decode(codeLengthTable)
            switch symbol {
            case 0...15: lengths.append(symbol)
            case 16:
                guard let previous = lengths.last else { throw Malformed() }
                lengths += [Int](repeating: previous, count: 3 + (try bits(2)))
            case 17: lengths += [Int](repeating: 0, count: 3 + (try bits(3)))
            default: lengths += [Int](repeating: 0, count: 11 + (try bits(7)))
            }
        }
        return (Huffman(lengths: Array(lengths[0..<literalCount])), Huffman(lengths: Array(lengths[literalCount...])))
    }

    private static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    private static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    private static let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    private static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    private mutating func huffmanBlock(literals: Huffman, distances: Huffman) throws {
        while true {
            let symbol = try decode(literals)
            if symbol < 256 {
                output.append(UInt8(symbol))
            } else if symbol == 256 {
                return
            } else {
                let lengthIndex = symbol - 257
                guard lengthIndex < 29 else { throw Malformed() }
                let length = Self.lengthBase[lengthIndex] + (try bits(Self.lengthExtra[lengthIndex]))
                let distanceCode = try decode(distances)
                guard distanceCode < 30 else { throw Malformed() }
                let distance = Self.distanceBase[distanceCode] + (try bits(Self.distanceExtra[distanceCode]))
                guard distance <= output.count else { throw Malformed() }
                longestDistance = max(longestDistance, distance)
                for _ in 0..<length { output.append(output[output.count - distance]) }
            }
        }
    }
}
