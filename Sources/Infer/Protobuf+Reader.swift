/// A protobuf wire-format reader over a byte array: varints, fixed32/64 and length-delimited fields.
///
/// Value type; every read is bounds-checked and a failure throws `InferError` carrying the absolute byte offset
/// in the file. Nested messages are read with `sub(length:)`, which returns a reader over just those bytes.
struct ProtobufReader {
    /// Wire types (protobuf encoding spec): 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32.
    enum WireType: Int { case varint = 0, fixed64 = 1, lengthDelimited = 2, startGroup = 3, endGroup = 4, fixed32 = 5 }

    let bytes: [UInt8]
    /// Current absolute offset into `bytes`.
    private(set) var offset: Int
    /// End (exclusive) of the region this reader may read.
    let end: Int
    let file: String

    init(bytes: [UInt8], file: String) {
        self.bytes = bytes
        self.offset = 0
        self.end = bytes.count
        self.file = file
    }

    private init(bytes: [UInt8], offset: Int, end: Int, file: String) {
        self.bytes = bytes
        self.offset = offset
        self.end = end
        self.file = file
    }

    var isAtEnd: Bool { offset >= end }

    func error(_ message: String, at position: Int? = nil) -> InferError {
        InferError(.badData, file: file, byteOffset: position ?? offset, message)
    }

    mutating func readVarint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        let start = offset
        while true {
            guard offset < end else { throw error("truncated varint", at: start) }
            let byte = bytes[offset]
            offset += 1
            if shift == 63 && byte > 1 { throw error("varint longer than 64 bits", at: start) }
            result |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw error("varint longer than 10 bytes", at: start) }
        }
    }

    /// Reads a field key; returns the field number and wire type.
    mutating func readKey() throws -> (field: Int, wire: WireType) {
        let start = offset
        let key = try readVarint()
        guard let wire = WireType(rawValue: Int(key & 7)) else {
            throw error("invalid wire type \(key & 7)", at: start)
        }
        let field = key >> 3
        guard field >= 1 && field <= 536_870_911 else { throw error("invalid field number \(field)", at: start) }
        return (Int(field), wire)
    }

    mutating func readFixed32() throws -> UInt32 {
        guard end - offset >= 4 else { throw error("truncated fixed32") }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[offset + i]) << (8 * UInt32(i)) }
        offset += 4
        return v
    }

    mutating func readFixed64() throws -> UInt64 {
        guard end - offset >= 8 else { throw error("truncated fixed64") }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return v
    }

    /// Reads a length prefix and checks the bytes are present.
    mutating func readLength() throws -> Int {
        let start = offset
        let length = try readVarint()
        guard length <= UInt64(end - offset) else {
            throw error("length \(length) runs past the end of its message (\(end - offset) bytes left)", at: start)
        }
        return Int(length)
    }

    /// A reader over the next length-delimited field's bytes; advances past them.
    mutating func sub() throws -> ProtobufReader {
        let length = try readLength()
        let reader = ProtobufReader(bytes: bytes, offset: offset, end: offset + length, file: file)
        offset += length
        return reader
    }

    mutating func readBytes() throws -> ArraySlice<UInt8> {
        let length = try readLength()
        defer { offset += length }
        return bytes[offset..<(offset + length)]
    }

    mutating func readString() throws -> String {
        String(decoding: try readBytes(), as: UTF8.self)
    }

    mutating func readInt64(_ wire: WireType) throws -> Int64 {
        guard wire == .varint else { throw error("expected a varint field, got wire type \(wire.rawValue)") }
        return Int64(bitPattern: try readVarint())
    }

    mutating func readFloat(_ wire: WireType) throws -> Float {
        guard wire == .fixed32 else { throw error("expected a fixed32 float, got wire type \(wire.rawValue)") }
        return Float(bitPattern: try readFixed32())
    }

    /// Reads a repeated int64 (packed or one element) and appends to `values`.
    mutating func readRepeatedInt64(_ wire: WireType, into values: inout [Int64]) throws {
        if wire == .lengthDelimited {
            var packed = try sub()
            while !packed.isAtEnd { values.append(Int64(bitPattern: try packed.readVarint())) }
        } else {
            values.append(try readInt64(wire))
        }
    }

    /// Reads a repeated float (packed or one element) and appends to `values`.
    mutating func readRepeatedFloat(_ wire: WireType, into values: inout [Float]) throws {
        if wire == .lengthDelimited {
            let length = try readLength()
            guard length % 4 == 0 else { throw error("packed float field of \(length) bytes is not a multiple of 4") }
            values.reserveCapacity(values.count + length / 4)
            for _ in 0..<(length / 4) { values.append(Float(bitPattern: try readFixed32())) }
        } else {
            values.append(try readFloat(wire))
        }
    }

    /// Reads a repeated double (packed or one element) and appends to `values`.
    mutating func readRepeatedDouble(_ wire: WireType, into values: inout [Double]) throws {
        if wire == .lengthDelimited {
            let length = try readLength()
            guard length % 8 == 0 else { throw error("packed double field of \(length) bytes is not a multiple of 8") }
            for _ in 0..<(length / 8) { values.append(Double(bitPattern: try readFixed64())) }
        } else {
            guard wire == .fixed64 else { throw error("expected a fixed64 double, got wire type \(wire.rawValue)") }
            values.append(Double(bitPattern: try readFixed64()))
        }
    }

    /// Skips a field of the given wire type.
    mutating func skip(_ wire: WireType) throws {
        switch wire {
        case .varint: _ = try readVarint()
        case .fixed64: _ = try readFixed64()
        case .fixed32: _ = try readFixed32()
        case .lengthDelimited: _ = try readBytes()
        case .startGroup, .endGroup: throw error("groups (wire type \(wire.rawValue)) are not supported")
        }
    }
}
