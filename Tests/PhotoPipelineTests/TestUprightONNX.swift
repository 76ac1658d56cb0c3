/// A tiny colorizer with an orientation head, for `UprightTests` (field numbers from onnx.proto3): input L
/// `[1, 1, 8, 8]`, output ab = L in both planes (`Concat`), and `turn_probs` `[1, 4]`: the mean of each 4×4 quadrant
/// (`AveragePool`, `Flatten`: top left, top right, bottom left, bottom right), `Gemm`, `Softmax`. Its weights say
/// "the upright picture is the one whose bright quadrant is the top left": turned c quarter turns counterclockwise,
/// the top left quadrant lies bottom left (1), bottom right (2), top right (3).
enum TestUprightONNX {
    private typealias Writer = TestONNX.Writer

    static let sidePx = 8

    static func model() -> [UInt8] {
        func tensor(_ w: inout Writer, _ name: String, _ dims: [Int], _ values: [Float]) {
            for d in dims { w.int(1, Int64(d)) }
            w.int(2, 1)
            w.string(8, name)
            w.data(9, values.flatMap { v in (0..<4).map { UInt8((v.bitPattern >> (8 * UInt32($0))) & 0xff) } })
        }
        func valueInfo(_ w: inout Writer, _ name: String, _ dims: [Int]) {
            w.string(1, name)
            w.message(2) { t in
                t.message(1) { tt in
                    tt.int(1, 1)
                    tt.message(2) { s in for d in dims { s.message(1) { $0.int(1, Int64(d)) } } }
                }
            }
        }
        func node(
            _ g: inout Writer, _ op: String, _ inputs: [String], _ output: String, ints: [(String, [Int])] = [],
            int: [(String, Int)] = []
        ) {
            g.message(1) { n in
                for i in inputs { n.string(1, i) }
                n.string(2, output); n.string(3, output); n.string(4, op)
                for (name, values) in ints {
                    n.message(5) { a in
                        a.string(1, name)
                        for v in values { a.int(8, Int64(v)) }
                        a.int(20, 7)
                    }
                }
                for (name, value) in int {
                    n.message(5) { a in
                        a.string(1, name); a.int(3, Int64(value)); a.int(20, 2)
                    }
                }
            }
        }
        // logit c = 0.1 × the mean of the quadrant where the upright picture's top left lies turned c times.
        let quadrantOfTopLeft = [0, 2, 3, 1]
        var weight = [Float](repeating: 0, count: 16)
        for c in 0..<4 { weight[c * 4 + quadrantOfTopLeft[c]] = 0.1 }
        let n = sidePx
        var m = Writer()
        m.int(1, 8)
        m.message(7) { g in
            node(&g, "Concat", ["L", "L"], "ab", int: [("axis", 1)])
            node(&g, "AveragePool", ["L"], "quadrants", ints: [("kernel_shape", [4, 4]), ("strides", [4, 4])])
            node(&g, "Flatten", ["quadrants"], "means", int: [("axis", 1)])
            node(&g, "Gemm", ["means", "w", "b"], "logits", int: [("transB", 1)])
            node(&g, "Softmax", ["logits"], "turn_probs", int: [("axis", 1)])
            g.string(2, "upright")
            g.message(5) { tensor(&$0, "w", [4, 4], weight) }
            g.message(5) { tensor(&$0, "b", [4], [0, 0, 0, 0]) }
            g.message(11) { valueInfo(&$0, "L", [1, 1, n, n]) }
            g.message(12) { valueInfo(&$0, "ab", [1, 2, n, n]) }
        }
        m.message(8) { o in
            o.string(1, ""); o.int(2, 17)
        }
        return m.bytes
    }
}
