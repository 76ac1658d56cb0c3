import ColorcamCore
import Stream

/// Why a JSON parse stopped: the input ended inside a value, or a byte broke the grammar.
enum TraceJSONFailure: Error {
    /// The input ended before the value was complete (a truncated file).
    case endOfInput
    /// Byte `offset` is not valid JSON at that point.
    case syntax(offset: Int, String)
}

/// A small recursive-descent JSON parser over a byte buffer that knows the byte offset of everything it reads.
///
/// It exists (rather than `JSONSerialization`) so the trace reader can stream events one by one, tell a truncated
/// file (input ends inside a value) from a malformed one (a bad byte, reported with its offset), and keep memory to
/// the file bytes plus one event. Strict RFC 8259 grammar; nesting is capped at `maxDepth` so hostile input cannot
/// overflow the stack. Invalid UTF-8 inside strings is replaced with U+FFFD.
///
/// Threading: a value type used by one thread; `bytes` must stay valid while the parser is used.
struct TraceJSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    /// Offset of the next byte to read.
    var offset: Int = 0
    static let maxDepth = 64

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    var atEnd: Bool { offset >= bytes.count }

    mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x0A, 0x0D, 0x09: offset += 1
            default: return
            }
        }
    }

    /// The next byte without consuming it. Throws `.endOfInput` at the end.
    func peek() throws(TraceJSONFailure) -> UInt8 {
        guard offset < bytes.count else { throw .endOfInput }
        return bytes[offset]
    }

    /// Describes the byte at `offset` for error messages: `'x'` for printable ASCII, else `0xNN`.
    func describeByte(at position: Int) -> String {
        guard position < bytes.count else { return "end of file" }
        let byte = bytes[position]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16)
    }

    mutating func parseValue(depth: Int = 0) throws(TraceJSONFailure) -> JSONValue {
        skipWhitespace()
        let byte = try peek()
        switch byte {
        case UInt8(ascii: "{"): return .object(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try parseLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try parseLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try parseLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw .syntax(offset: offset, "expected a JSON value, found \(describeByte(at: offset))")
        }
    }

    /// Parses `{ "key": value, … }` starting at the `{`.
    mutating func parseObject(depth: Int) throws(TraceJSONFailure) -> [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        try parseMembers(depth: depth) { key, parser throws(TraceJSONFailure) in
            members[key] = try parser.parseValue(depth: depth)
        }
        return members
    }

    /// Walks `{ "key": value, … }` starting at the `{`, calling `member` with each key and the parser positioned
    /// before its value; `member` must consume exactly that one value (e.g. with `parseValue`).
    mutating func parseMembers(
        depth: Int, _ member: (String, inout TraceJSONParser) throws(TraceJSONFailure) -> Void
    ) throws(TraceJSONFailure) {
        guard depth <= TraceJSONParser.maxDepth else {
            throw .syntax(offset: offset, "JSON nested deeper than \(TraceJSONParser.maxDepth) levels")
        }
        offset += 1  // {
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            offset += 1
            return
        }
        while true {
            skipWhitespace()
            guard try peek() == UInt8(ascii: "\"") else {
                throw .syntax(offset: offset, "expected a quoted key, found \(describeByte(at: offset))")
            }
            let key = try parseString()
            skipWhitespace()
            guard try peek() == UInt8(ascii: ":") else {
                throw .syntax(offset: offset, "expected ':' after key \"\(key)\", found \(describeByte(at: offset))")
            }
            offset += 1
            skipWhitespace()
            try member(key, &self)
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "}"): offset += 1; return
            default: throw .syntax(offset: offset, "expected ',' or '}' in object, found \(describeByte(at: offset))")
            }
        }
    }

    /// Parses `[ value, … ]` starting at the `[`.
    mutating func parseArray(depth: Int) throws(TraceJSONFailure) -> JSONValue {
        guard depth <= TraceJSONParser.maxDepth else {
            throw .syntax(offset: offset, "JSON nested deeper than \(TraceJSONParser.maxDepth) levels")
        }
        offset += 1  // [
        var values: [JSONValue] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            offset += 1
            return .array(values)
        }
        while true {
            values.append(try parseValue(depth: depth))
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "]"): offset += 1; return .array(values)
            default: throw .syntax(offset: offset, "expected ',' or ']' in array, found \(describeByte(at: offset))")
            }
        }
    }

    /// Parses a string starting at its opening quote.
    mutating func parseString() throws(TraceJSONFailure) -> String {
        offset += 1  // "
        let start = offset
        // Fast path: no escapes.
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
                offset += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw .syntax(offset: offset, "control character 0x\(String(byte, radix: 16)) in string") }
            offset += 1
        }
        guard offset < bytes.count else { throw .endOfInput }
        var utf8 = Array(UnsafeBufferPointer(rebasing: bytes[start..<offset]))
        while true {
            let byte = try peek()
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                let escape = try peek()
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): appendScalar(try parseUnicodeEscape(), to: &utf8)
                default: throw .syntax(offset: offset - 1, "invalid escape \\\(describeByte(at: offset - 1)) in string")
                }
            default:
                if byte < 0x20 {
                    throw .syntax(offset: offset - 1, "control character 0x\(String(byte, radix: 16)) in string")
                }
                utf8.append(byte)
            }
        }
    }

    /// After `\u`: four hex digits, and a following `\uDC00`-`\uDFFF` when the first is a high surrogate.
    private mutating func parseUnicodeEscape() throws(TraceJSONFailure) -> Unicode.Scalar {
        let first = try parseHex4()
        if (0xD800...0xDBFF).contains(first) {
            // A high surrogate must be followed by an escaped low surrogate; anything else is replaced.
            if offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") {
                offset += 2
                let second = try parseHex4()
                if (0xDC00...0xDFFF).contains(second) {
                    let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                    return Unicode.Scalar(value) ?? "\u{FFFD}"
                }
                return "\u{FFFD}"
            }
            if offset + 1 >= bytes.count { throw .endOfInput }
            return "\u{FFFD}"
        }
        return Unicode.Scalar(first) ?? "\u{FFFD}"
    }

    private mutating func parseHex4() throws(TraceJSONFailure) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = try peek()
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default:
                throw .syntax(offset: offset, "expected a hex digit in \\u escape, found \(describeByte(at: offset))")
            }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }

    private func appendScalar(_ scalar: Unicode.Scalar, to utf8: inout [UInt8]) {
        var buffer = ""
        buffer.unicodeScalars.append(scalar)
        utf8.append(contentsOf: buffer.utf8)
    }

    /// Parses a number; integers without fraction or exponent that fit in 64 bits stay `.int`.
    mutating func parseNumber() throws(TraceJSONFailure) -> JSONValue {
        let start = offset
        var negative = false
        if bytes[offset] == UInt8(ascii: "-") {
            negative = true
            offset += 1
        }
        let digitsStart = offset
        var magnitude: UInt64 = 0
        var overflow = false
        while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) {
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(bytes[offset] - UInt8(ascii: "0")))
            overflow = overflow || o1 || o2
            magnitude = sum
            offset += 1
        }
        if offset == digitsStart {
            if offset >= bytes.count { throw .endOfInput }
            throw .syntax(offset: offset, "expected a digit, found \(describeByte(at: offset))")
        }
        var isInteger = true
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            try skipDigits()
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                offset += 1
            }
            try skipDigits()
        }
        if isInteger && !overflow {
            if !negative, magnitude <= UInt64(Int64.max) { return .int(Int64(magnitude)) }
            if negative, magnitude <= UInt64(Int64.max) { return .int(-Int64(magnitude)) }
            if negative, magnitude == UInt64(Int64.max) + 1 { return .int(.min) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        guard let value = Double(text) else { throw .syntax(offset: start, "malformed number \(text)") }
        return .double(value)
    }

    private mutating func skipDigits() throws(TraceJSONFailure) {
        let start = offset
        while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
        if offset == start {
            if offset >= bytes.count { throw .endOfInput }
            throw .syntax(offset: offset, "expected a digit in number, found \(describeByte(at: offset))")
        }
    }

    /// Matches `true`, `false` or `null` byte by byte (a file cut inside one is `.endOfInput`).
    private mutating func parseLiteral(_ word: String) throws(TraceJSONFailure) {
        for expected in word.utf8 {
            let byte = try peek()
            guard byte == expected else { throw .syntax(offset: offset, "invalid literal, expected \(word)") }
            offset += 1
        }
    }
}
