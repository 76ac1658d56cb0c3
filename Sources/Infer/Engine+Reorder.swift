/// Load-time reordering (fast mode only): a nearest-neighbour Resize followed by a 1×1 stride-1 Conv becomes the
/// Conv followed by the Resize.
///
/// Nearest resizing on the spatial axes only copies pixels, and a 1×1 conv (with its bias and fused activation) is
/// computed per pixel, so the two commute bit for bit; run conv-first, the conv works on the smaller input and the
/// resize moves the conv's (usually fewer) output channels. In a U-Net decoder (Resize ×2 → 1×1 conv → Concat) this
/// makes the conv 4× cheaper. Applies when the resize output has exactly one use (the conv) and is not a graph
/// output, the resize keeps the batch and channel axes (rank 4) and is given by `scales` (not `sizes`, which would
/// name the old channel count).
extension InferenceEngine {
    static func convBeforeNearestResize(
        _ nodes: [RuntimeNode], shapes: inout [String: [Int]],
        consts: [String: ConstValue], graphOutputs: Set<String>
    ) -> [RuntimeNode] {
        var nodes = nodes
        var uses: [String: Int] = [:]
        for n in nodes { for i in n.node.inputs where !i.isEmpty { uses[i, default: 0] += 1 } }
        for o in graphOutputs { uses[o, default: 0] += 1 }
        var producer: [String: Int] = [:]
        for (i, n) in nodes.enumerated() { for o in n.node.outputs { producer[o] = i } }
        var counter = 0
        for j in nodes.indices where nodes[j].node.opType == "Conv" {
            let conv = nodes[j].node
            guard let r = conv.inputs.first, uses[r] == 1, let i = producer[r], isPointwise(conv, consts: consts),
                let convOut = conv.outputs.first, let convShape = shapes[convOut]
            else { continue }
            let resize = nodes[i].node
            guard isNearestSpatialResize(resize, shapes: shapes, consts: consts), let x = resize.inputs.first,
                let xShape = shapes[x]
            else { continue }
            counter += 1
            let low = "colorcam.lowres.\(counter)"
            var convFirst = conv
            convFirst.inputs[0] = x
            convFirst.outputs = [low]
            var resizeAfter = resize
            resizeAfter.inputs[0] = low
            resizeAfter.outputs = [convOut]
            shapes[low] = [convShape[0], convShape[1], xShape[2], xShape[3]]
            nodes[i].node = convFirst
            nodes[j].node = resizeAfter
        }
        return nodes
    }

    /// A Conv with a constant 1×1 kernel, stride 1 and no padding (any group, bias, fused activation).
    static func isPointwise(_ conv: ONNXNode, consts: [String: ConstValue]) -> Bool {
        guard conv.inputs.count >= 2, let w = consts[conv.inputs[1]]?.shape, w.count == 4, w[2] == 1, w[3] == 1
        else { return false }
        func ints(_ name: String) -> [Int64]? {
            if case .ints(let v)? = conv.attributes[name] { return v }
            return nil
        }
        if let s = ints("strides"), s.contains(where: { $0 != 1 }) { return false }
        if let p = ints("pads"), p.contains(where: { $0 != 0 }) { return false }
        if let k = ints("kernel_shape"), k != [1, 1] { return false }
        return true
    }

    /// A nearest Resize/Upsample of a rank-4 tensor that keeps N and C, given by constant scales.
    static func isNearestSpatialResize(
        _ node: ONNXNode, shapes: [String: [Int]],
        consts: [String: ConstValue]
    ) -> Bool {
        guard node.opType == "Resize" || node.opType == "Upsample", let x = node.inputs.first,
            let out = node.outputs.first, let xs = shapes[x], let os = shapes[out], xs.count == 4, os.count == 4,
            xs[0] == os[0], xs[1] == os[1]
        else { return false }
        if case .string(let mode)? = node.attributes["mode"], mode != "nearest" { return false }
        if node.attributes["axes"] != nil { return false }
        // Resize(X, roi, scales, sizes): sizes would carry the old channel count.
        if node.opType == "Resize", node.inputs.count > 3, !node.inputs[3].isEmpty,
            (consts[node.inputs[3]]?.count ?? 1) > 0
        {
            return false
        }
        return true
    }
}
