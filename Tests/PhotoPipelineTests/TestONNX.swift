/// Builds tiny ONNX models for the segmenter tests (field numbers from onnx.proto3): a 1×1 convolution from the
/// 3-channel input "frame" (symbolic height and width, as the trainer exports) to `weights.count / 3` channels,
/// then a sigmoid, output "maps".
enum TestONNX {
    /// A protobuf writer (varints, length-delimited fields); `TestUprightONNX` writes with it too.
    struct Writer {
        var bytes: [UInt8] = []
        mutating func varint(_ value: UInt64) {
            var v = value
            while v >= 0x80 { bytes.append(UInt8(v & 0x7f) | 0x80); v >>= 7 }
            bytes.append(UInt8(v))
        }
        mutating func int(_ field: Int, _ value: Int64) {
            varint(UInt64(field << 3)); varint(UInt64(bitPattern: value))
        }
        mutating func data(_ field: Int, _ payload: [UInt8]) {
            varint(UInt64(field << 3 | 2)); varint(UInt64(payload.count)); bytes += payload
        }
        mutating func string(_ field: Int, _ s: String) { data(field, Array(s.utf8)) }
        mutating func message(_ field: Int, _ build: (inout Writer) -> Void) {
            var sub = Writer()
            build(&sub)
            data(field, sub.bytes)
        }
    }

    /// `maps = sigmoid(W · frame + b)` per cell; `weights` is `[out][3]` row-major, `bias` `[out]`.
    static func conv1x1Sigmoid(weights: [Float], bias: [Float]) -> [UInt8] {
        precondition(weights.count == 3 * bias.count)
        func tensor(_ w: inout Writer, _ name: String, _ dims: [Int], _ values: [Float]) {
            for d in dims { w.int(1, Int64(d)) }
            w.int(2, 1)
            w.string(8, name)
            w.data(9, values.flatMap { v in (0..<4).map { UInt8((v.bitPattern >> (8 * UInt32($0))) & 0xff) } })
        }
        func valueInfo(_ w: inout Writer, _ name: String, channels: Int) {
            w.string(1, name)
            w.message(2) { t in
                t.message(1) { tt in
                    tt.int(1, 1)
                    tt.message(2) { s in
                        s.message(1) { $0.int(1, 1) }
                        s.message(1) { $0.int(1, Int64(channels)) }
                        s.message(1) { $0.string(2, "h") }
                        s.message(1) { $0.string(2, "w") }
                    }
                }
            }
        }
        var m = Writer()
        m.int(1, 8)
        m.message(7) { g in
            g.message(1) { n in
                for i in ["frame", "w", "b"] { n.string(1, i) }
                n.string(2, "z"); n.string(3, "conv"); n.string(4, "Conv")
            }
            g.message(1) { n in
                n.string(1, "z"); n.string(2, "maps"); n.string(3, "sigmoid"); n.string(4, "Sigmoid")
            }
            g.string(2, "segmenter")
            g.message(5) { tensor(&$0, "w", [bias.count, 3, 1, 1], weights) }
            g.message(5) { tensor(&$0, "b", [bias.count], bias) }
            g.message(11) { valueInfo(&$0, "frame", channels: 3) }
            g.message(12) { valueInfo(&$0, "maps", channels: bias.count) }
        }
        m.message(8) { o in
            o.string(1, ""); o.int(2, 17)
        }
        return m.bytes
    }
}
