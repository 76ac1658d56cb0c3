/// A minimal protobuf writer for tests: builds ONNX messages field by field.
struct ProtoWriter {
    var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 { bytes.append(UInt8(v & 0x7f) | 0x80); v >>= 7 }
        bytes.append(UInt8(v))
    }
    mutating func key(_ field: Int, _ wire: Int) { varint(UInt64(field << 3 | wire)) }
    mutating func int(_ field: Int, _ value: Int64) { key(field, 0); varint(UInt64(bitPattern: value)) }
    mutating func float(_ field: Int, _ value: Float) {
        key(field, 5)
        let b = value.bitPattern
        for i in 0..<4 { bytes.append(UInt8((b >> (8 * UInt32(i))) & 0xff)) }
    }
    mutating func data(_ field: Int, _ payload: [UInt8]) {
        key(field, 2); varint(UInt64(payload.count)); bytes += payload
    }
    mutating func string(_ field: Int, _ s: String) { data(field, Array(s.utf8)) }
    mutating func message(_ field: Int, _ build: (inout ProtoWriter) -> Void) {
        var sub = ProtoWriter()
        build(&sub)
        data(field, sub.bytes)
    }
}

/// Builds ONNX models for tests (field numbers from onnx.proto3).
enum TestModel {
    static func floatTensor(_ w: inout ProtoWriter, name: String, dims: [Int], values: [Float], packed: Bool = true) {
        for d in dims { w.int(1, Int64(d)) }
        w.int(2, 1)
        w.string(8, name)
        if packed {
            var raw: [UInt8] = []
            for v in values {
                let b = v.bitPattern; for i in 0..<4 { raw.append(UInt8((b >> (8 * UInt32(i))) & 0xff)) }
            }
            w.data(9, raw)
        } else {
            for v in values { w.float(4, v) }
        }
    }

    static func valueInfo(_ w: inout ProtoWriter, name: String, dims: [Int]?) {
        w.string(1, name)
        w.message(2) { t in
            t.message(1) { tt in
                tt.int(1, 1)
                if let dims { tt.message(2) { s in for d in dims { s.message(1) { dim in dim.int(1, Int64(d)) } } } }
            }
        }
    }

    struct Node {
        var op: String
        var inputs: [String]
        var outputs: [String]
        var ints: [String: [Int64]] = [:]
        var int: [String: Int64] = [:]
        var floats: [String: Float] = [:]
    }

    /// A model with one input `x` of `inputDims`, the given nodes and initializers, and output `outputName`.
    static func encode(
        nodes: [Node], initializers: [(String, [Int], [Float])], inputDims: [Int],
        outputName: String, opset: Int64 = 17
    ) -> [UInt8] {
        var m = ProtoWriter()
        m.int(1, 8)
        m.message(7) { g in
            for n in nodes {
                g.message(1) { nw in
                    for i in n.inputs { nw.string(1, i) }
                    for o in n.outputs { nw.string(2, o) }
                    nw.string(3, "node_" + n.outputs[0])
                    nw.string(4, n.op)
                    for (name, values) in n.ints.sorted(by: { $0.key < $1.key }) {
                        nw.message(5) { a in
                            a.string(1, name); for v in values { a.int(8, v) }; a.int(20, 7)
                        }
                    }
                    for (name, value) in n.int.sorted(by: { $0.key < $1.key }) {
                        nw.message(5) { a in
                            a.string(1, name); a.int(3, value); a.int(20, 2)
                        }
                    }
                    for (name, value) in n.floats.sorted(by: { $0.key < $1.key }) {
                        nw.message(5) { a in
                            a.string(1, name); a.float(2, value); a.int(20, 1)
                        }
                    }
                }
            }
            g.string(2, "test")
            for (name, dims, values) in initializers {
                g.message(5) { floatTensor(&$0, name: name, dims: dims, values: values) }
            }
            g.message(11) { valueInfo(&$0, name: "x", dims: inputDims) }
            g.message(12) { valueInfo(&$0, name: outputName, dims: nil) }
        }
        m.message(8) { o in
            o.string(1, ""); o.int(2, opset)
        }
        return m.bytes
    }
}

/// A seeded xorshift generator so test data is reproducible.
struct SeededRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed | 1 }
    mutating func next() -> UInt64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return state
    }
    mutating func float() -> Float { Float(next() >> 40) / Float(1 << 24) * 2 - 1 }
    mutating func floats(_ n: Int) -> [Float] { (0..<n).map { _ in float() } }
    mutating func int(_ upper: Int) -> Int { Int(next() % UInt64(upper)) }
}

/// The largest |got − want| / max(1, |want|) over two equal-length outputs: the engine tests' relative error.
func worstRelativeError(_ got: [Float], _ want: [Float]) -> Float {
    zip(got, want).reduce(0) { max($0, abs($1.0 - $1.1) / max(1, abs($1.1))) }
}
