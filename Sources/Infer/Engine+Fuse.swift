/// Load-time fusion on the run-time node list (fast mode only): BatchNormalization, per-channel Mul and Add fold
/// into the preceding Conv's weights and bias (exact up to float rounding), and Relu/LeakyRelu/Clip become the
/// Conv's or ConvTranspose's fused epilogue. A fusion only applies when the Conv output has exactly one consumer and is not a graph output.
extension InferenceEngine {
    struct RuntimeNode {
        var node: ONNXNode
    }

    static func fuse(
        _ nodes: [RuntimeNode], consts: inout [String: ConstValue], shapes: [String: [Int]],
        graphOutputs: Set<String>, opset: Int64, file: String
    ) throws -> [RuntimeNode] {
        var nodes = nodes
        var counter = 0
        var changed = true
        while changed {
            changed = false
            var uses: [String: Int] = [:]
            for n in nodes { for i in n.node.inputs { uses[i, default: 0] += 1 } }
            for o in graphOutputs { uses[o, default: 0] += 1 }
            var consumer: [String: Int] = [:]
            for (j, n) in nodes.enumerated() { for i in n.node.inputs { consumer[i] = j } }
            for i in nodes.indices where nodes[i].node.opType == "Conv" || nodes[i].node.opType == "ConvTranspose" {
                let conv = nodes[i].node
                guard let out = conv.outputs.first, uses[out] == 1, let j = consumer[out], j != i,
                    conv.attributes["colorcam.activation"] == nil,
                    let weights = consts[conv.inputs[1]]?.floats, let wShape = consts[conv.inputs[1]]?.shape
                else { continue }
                let next = nodes[j].node
                // ConvTranspose weights are [Cin, Cout/group, kh, kw]: only the activation fuses there.
                if conv.opType == "ConvTranspose" && !["Relu", "LeakyRelu", "Clip"].contains(next.opType) { continue }
                let channels = wShape[0]
                guard channels > 0, weights.count % channels == 0 else { continue }
                let perChannel = weights.count / channels
                var bias =
                    conv.inputs.count > 2 && !conv.inputs[2].isEmpty
                    ? consts[conv.inputs[2]]?.floats : [Float](repeating: 0, count: channels)
                guard bias != nil else { continue }
                var scale: [Float]?
                var shift: [Float]?
                var activation: [String: ONNXAttribute]?
                let ctx = OpContext(
                    node: next, opset: opset, inputShapes: next.inputs.map { shapes[$0] },
                    consts: next.inputs.map { consts[$0] }, mode: .fast, file: file,
                    kernels: InstructionSet.baseline.kernels)
                switch next.opType {
                case "BatchNormalization":
                    guard (1...4).allSatisfy({ next.inputs.count > $0 && consts[next.inputs[$0]] != nil }),
                        try ctx.int("training_mode", 0) == 0
                    else { continue }
                    let (s, t) = try BatchNormOp.affine(ctx, channels: channels)
                    scale = s; shift = t
                case "Mul", "Add":
                    let other = next.inputs[0] == out ? next.inputs[1] : next.inputs[0]
                    guard let c = consts[other]?.floats, let cs = shapes[other],
                        let v = perChannelValues(c, shape: cs, channels: channels, outRank: shapes[out]?.count ?? 4)
                    else { continue }
                    if next.opType == "Mul" { scale = v } else { shift = v }
                case "Relu": activation = ["colorcam.activation": .string("relu")]
                case "LeakyRelu":
                    activation = [
                        "colorcam.activation": .string("leaky"),
                        "colorcam.alpha": .float(try ctx.float("alpha", 0.01))
                    ]
                case "Clip":
                    let (lo, hi) = try UnaryOp.clipBounds(ctx)
                    activation = [
                        "colorcam.activation": .string("clip"), "colorcam.min": .float(lo), "colorcam.max": .float(hi)
                    ]
                default: continue
                }
                var fused = conv
                fused.outputs = [next.outputs[0]]
                if let activation {
                    fused.attributes.merge(activation) { $1 }
                } else {
                    var w = weights
                    if let scale {
                        for c in 0..<channels {
                            for k in 0..<perChannel { w[c * perChannel + k] *= scale[c] }
                            bias![c] *= scale[c]
                        }
                    }
                    if let shift { for c in 0..<channels { bias![c] += shift[c] } }
                    counter += 1
                    let wName = "colorcam.folded.\(counter).W", bName = "colorcam.folded.\(counter).B"
                    consts[wName] = ConstValue(shape: wShape, floats: w)
                    consts[bName] = ConstValue(shape: [channels], floats: bias!)
                    fused.inputs = [conv.inputs[0], wName, bName]
                }
                nodes[i].node = fused
                nodes.remove(at: j)
                changed = true
                break
            }
        }
        return nodes
    }

    /// Per-channel values of a constant that broadcasts over a conv output only along the channel axis.
    static func perChannelValues(_ c: [Float], shape: [Int], channels: Int, outRank: Int) -> [Float]? {
        if c.count == 1 && shape.count <= outRank { return [Float](repeating: c[0], count: channels) }
        guard c.count == channels, shape.count <= outRank, shape.count >= outRank - 1 else { return nil }
        // The channel axis is outRank-3 from the end: [C,1,1] or [1,C,1,1].
        let channelAxisFromEnd = outRank - 1
        let padded = [Int](repeating: 1, count: outRank - shape.count) + shape
        guard padded[outRank - channelAxisFromEnd] == channels,
            padded.enumerated().allSatisfy({ $0.offset == 1 || $0.element == 1 })
        else { return nil }
        return c
    }
}
