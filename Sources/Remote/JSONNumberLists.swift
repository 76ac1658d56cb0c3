#if canImport(Glibc)
    import Glibc
#endif

/// Takes the numeric `"data": [...]` lists out of a v2 JSON answer before Foundation parses the rest: Foundation's
/// JSON parser reads every number through `Decimal` (~2 µs each: 250 ms for a 2×256×256 tensor), `strtof` here
/// takes ~50 ns. The lists (nested brackets flattened) come back in document order and the text with each replaced
/// by `[]`. Nil when a `data` list holds anything but numbers (the caller then parses the whole text the slow way).
/// Pure; never traps on malformed text (fuzzed with the decoder).
enum JSONNumberLists {
    static func extract(_ json: ArraySlice<UInt8>) -> (stripped: [UInt8], lists: [[Float]])? {
        var stripped: [UInt8] = []
        stripped.reserveCapacity(min(json.count, 4096))
        var lists: [[Float]] = []
        var i = json.startIndex
        var copiedUpTo = i
        let end = json.endIndex
        let key = Array("\"data\"".utf8)
        var number = [CChar](repeating: 0, count: 48)
        while i < end {
            let c = json[i]
            guard c == UInt8(ascii: "\"") else { i += 1; continue }
            // A string token: is it the key "data" followed by `:` and `[`?
            let start = i
            i += 1
            while i < end && json[i] != UInt8(ascii: "\"") { i += json[i] == UInt8(ascii: "\\") ? 2 : 1 }
            i += 1
            guard i <= end, i - start == key.count, json[start..<i].elementsEqual(key) else { continue }
            var j = skipSpace(json, i)
            guard j < end, json[j] == UInt8(ascii: ":") else { continue }
            j = skipSpace(json, j + 1)
            guard j < end, json[j] == UInt8(ascii: "[") else { continue }
            // The list: numbers, commas, brackets and spaces up to the matching `]`.
            var depth = 0, k = j
            var values: [Float] = []
            scan: while k < end {
                switch json[k] {
                case UInt8(ascii: "["): depth += 1; k += 1
                case UInt8(ascii: "]"):
                    depth -= 1; k += 1
                    if depth == 0 { break scan }
                case UInt8(ascii: ","), UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                    k += 1
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    var n = 0
                    while k < end, n < number.count - 1, isNumberByte(json[k]) {
                        number[n] = CChar(bitPattern: json[k]); n += 1; k += 1
                    }
                    guard n < number.count - 1 else { return nil }
                    number[n] = 0
                    var parsedEnd: UnsafeMutablePointer<CChar>?
                    let value = number.withUnsafeMutableBufferPointer { p -> Float in
                        let v = strtof(p.baseAddress!, &parsedEnd)
                        return parsedEnd == p.baseAddress! + n ? v : .nan
                    }
                    guard !value.isNaN else { return nil }
                    values.append(value)
                default:
                    return nil
                }
            }
            guard depth == 0 else { return nil }
            stripped.append(contentsOf: json[copiedUpTo..<j])
            stripped.append(contentsOf: [UInt8(ascii: "["), UInt8(ascii: "]")])
            copiedUpTo = k
            lists.append(values)
            i = k
        }
        stripped.append(contentsOf: json[copiedUpTo..<end])
        return (stripped, lists)
    }

    private static func skipSpace(_ json: ArraySlice<UInt8>, _ from: Int) -> Int {
        var i = from
        while i < json.endIndex, json[i] == 32 || json[i] == 9 || json[i] == 10 || json[i] == 13 { i += 1 }
        return i
    }

    private static func isNumberByte(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "-") || b == UInt8(ascii: "+")
            || b == UInt8(ascii: ".") || b == UInt8(ascii: "e") || b == UInt8(ascii: "E")
    }
}
