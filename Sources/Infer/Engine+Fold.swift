/// Load-time evaluation: `Constant`, `Shape` and any node whose inputs are all constants (shape subgraphs such as
/// Shape→Gather→Unsqueeze→Concat→Reshape fold away entirely).
enum ConstFolder {
    /// The node's outputs if they can be computed now, else nil.
    static func fold(_ ctx: OpContext) throws -> [ConstValue]? {
        let node = ctx.node
        switch node.opType {
        case "Constant": return [try constant(ctx)]
        case "Shape":
            let shape = try ctx.shape(0)
            let rank = shape.count
            var start = try ctx.int("start", 0), end = try ctx.int("end", rank)
            if start < 0 { start += rank }; if end < 0 { end += rank }
            start = min(max(start, 0), rank); end = min(max(end, start), rank)
            return [ConstValue(shape: [end - start], ints: shape[start..<end].map { Int64($0) })]
        default: break
        }
        for i in 0..<ctx.inputShapes.count where ctx.has(i) && ctx.consts[i] == nil { return nil }
        guard ctx.has(0) || node.opType == "Range" else { return nil }
        let anyInt = ctx.consts.contains { $0?.isInt == true }
        switch node.opType {
        case "Identity", "Dropout": return [ctx.consts[0]!]
        case "Cast":
            let c = ctx.consts[0]!
            let to = try ctx.int("to", 1)
            if to == 1 || to == 11 { return [ConstValue(shape: c.shape, floats: c.asFloats)] }
            return [ConstValue(shape: c.shape, ints: c.asInts)]
        case "ConstantOfShape":
            let shape = ctx.consts[0]!.asInts.map { Int($0) }
            guard shape.allSatisfy({ $0 >= 0 }), let count = LayoutOps.product(shape), count < 1 << 28 else {
                throw ctx.error("bad shape \(shape)")
            }
            var value = ConstValue(shape: [1], floats: [0])
            if case .tensor(let t)? = node.attributes["value"] { value = ConstValue(t) }
            let n = shape.reduce(1, *)
            if let f = value.floats {
                return [ConstValue(shape: shape, floats: .init(repeating: f.first ?? 0, count: n))]
            }
            return [ConstValue(shape: shape, ints: .init(repeating: value.ints!.first ?? 0, count: n))]
        case "Range":
            let s = ctx.consts[0]!, l = ctx.consts[1]!, d = ctx.consts[2]!
            if s.isInt {
                let (a, b, step) = (s.asInts[0], l.asInts[0], d.asInts[0])
                guard step != 0 else { throw ctx.error("Range delta is 0") }
                return [
                    ConstValue(
                        shape: [Array(stride(from: a, to: b, by: Int(step))).count],
                        ints: Array(stride(from: a, to: b, by: Int(step))))
                ]
            }
            let values = Array(stride(from: s.asFloats[0], to: l.asFloats[0], by: d.asFloats[0]))
            return [ConstValue(shape: [values.count], floats: values)]
        case "Reshape", "Flatten", "Squeeze", "Unsqueeze":
            let c = ctx.consts[0]!
            let shape: [Int]
            switch node.opType {
            case "Reshape": shape = try LayoutOps.reshape(ctx, shape: c.shape, target: try ctx.constInts(1) ?? [])
            case "Flatten": shape = try LayoutOps.flatten(ctx, shape: c.shape)
            case "Squeeze": shape = try LayoutOps.squeeze(ctx, shape: c.shape)
            default: shape = try LayoutOps.unsqueeze(ctx, shape: c.shape)
            }
            var out = c
            out.shape = shape
            return [out]
        case "Transpose", "Slice", "Gather", "Pad":
            let c = ctx.consts[0]!
            let map: LayoutOps.IndexMap
            var fill: Float = 0
            switch node.opType {
            case "Transpose": map = try LayoutOps.transpose(ctx, shape: c.shape)
            case "Slice": map = try LayoutOps.slice(ctx, shape: c.shape)
            case "Pad": (map, fill) = try LayoutOps.pad(ctx, shape: c.shape)
            default:
                map = try LayoutOps.gather(
                    ctx, shape: c.shape, indices: try ctx.constInts(1)!, indexShape: try ctx.shape(1))
            }
            if let f = c.floats { return [ConstValue(shape: map.shape, floats: map.apply(f, fill: fill))] }
            return [ConstValue(shape: map.shape, ints: map.apply(c.ints!, fill: Int64(fill)))]
        case "Concat" where anyInt:
            let parts = ctx.consts.map { $0! }
            let (shape, axis) = try LayoutOps.concatShape(ctx, shapes: parts.map(\.shape))
            let outer = shape[..<axis].reduce(1, *)
            var ints: [Int64] = []
            for o in 0..<outer {
                for p in parts {
                    let block = p.shape[axis...].reduce(1, *)
                    ints += p.asInts[(o * block)..<((o + 1) * block)]
                }
            }
            return [ConstValue(shape: shape, ints: ints)]
        case _ where anyInt && ["Add", "Sub", "Mul", "Div"].contains(node.opType):
            let a = ctx.consts[0]!, b = ctx.consts[1]!
            let shape = try BinaryOp.broadcastShape(a.shape, b.shape, ctx)
            let sa = BinaryOp.broadcastStrides(a.shape, to: shape), sb = BinaryOp.broadcastStrides(b.shape, to: shape)
            let x = a.asInts, y = b.asInts
            let map = try LayoutOps.map(shape, ctx) { idx in zip(idx, sa).reduce(0) { $0 + $1.0 * $1.1 } }
            let mapB = try LayoutOps.map(shape, ctx) { idx in zip(idx, sb).reduce(0) { $0 + $1.0 * $1.1 } }
            let out: [Int64] = try zip(map.sources, mapB.sources).map { i, j in
                let (u, v) = (x[Int(i)], y[Int(j)])
                switch node.opType {
                case "Add": return u &+ v
                case "Sub": return u &- v
                case "Mul": return u &* v
                default:
                    guard v != 0 else { throw ctx.error("integer division by zero") }
                    return u.dividedReportingOverflow(by: v).partialValue  // Int64.min / -1 wraps, as Add/Sub/Mul do
                }
            }
            return [ConstValue(shape: shape, ints: out)]
        default:
            guard !anyInt else { throw ctx.error("integer inputs are only supported in shape computations") }
            return try evaluate(ctx)
        }
    }

    static func constant(_ ctx: OpContext) throws -> ConstValue {
        let a = ctx.node.attributes
        if case .tensor(let t)? = a["value"] { return ConstValue(t) }
        if case .float(let f)? = a["value_float"] { return ConstValue(shape: [], floats: [f]) }
        if case .floats(let f)? = a["value_floats"] { return ConstValue(shape: [f.count], floats: f) }
        if case .int(let i)? = a["value_int"] { return ConstValue(shape: [], ints: [i]) }
        if case .ints(let i)? = a["value_ints"] { return ConstValue(shape: [i.count], ints: i) }
        throw ctx.error("Constant has no supported value attribute")
    }

    /// Runs a float node once, with the reference kernels, on a temporary arena.
    static func evaluate(_ ctx: OpContext) throws -> [ConstValue] {
        let plan = try OpRegistry.plan(ctx)
        var offsets: [Int?] = []
        var total = 0
        for (i, c) in ctx.consts.enumerated() {
            if let c, !plan.capturedInputs.contains(i) {
                offsets.append(total); total += c.count
            } else {
                offsets.append(nil)
            }
        }
        var outOffsets: [Int] = []
        for s in plan.outputShapes { outOffsets.append(total); total += s.reduce(1, *) }
        let scratch = total
        total += plan.scratchFloats
        guard total < 1 << 28 else { throw ctx.error("constant subgraph is too large to fold") }
        var arena = [Float](repeating: 0, count: max(1, total))
        for (i, c) in ctx.consts.enumerated() {
            if let c, let o = offsets[i] { arena.replaceSubrange(o..<(o + c.count), with: c.asFloats) }
        }
        let kernel = try plan.build(KernelSlots(inputs: offsets, outputs: outOffsets, scratch: scratch))
        arena.withUnsafeMutableBufferPointer { kernel.run($0.baseAddress!) }
        return zip(plan.outputShapes, outOffsets).map { shape, o in
            ConstValue(shape: shape, floats: Array(arena[o..<(o + shape.reduce(1, *))]))
        }
    }
}
