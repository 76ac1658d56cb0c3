import InferKernelSet

#if canImport(Glibc)
    import Glibc
#endif

/// Resize (opsets 11+: X, roi, scales, sizes) and Upsample (X, scales): `nearest` on any axes (via an index
/// table), `linear` on the last two axes, with coordinate modes half_pixel, pytorch_half_pixel, align_corners and
/// asymmetric.
enum ResizeOp {
    /// A Resize node's output shape, per-axis scale, mode and coordinate transformation, read from its attributes
    /// and constant inputs (shared by the engine's plan and the training graph, `TrainOps`).
    struct Geometry {
        var input: [Int]
        var output: [Int]
        var scale: [Float]
        var mode: String
        var transform: String

        /// The input coordinate that output index `o` on axis `d` samples.
        func source(_ o: Int, _ d: Int) -> Float {
            let s = scale[d], inLen = Float(input[d]), outLen = Float(output[d])
            switch transform {
            case "half_pixel": return (Float(o) + 0.5) / s - 0.5
            case "pytorch_half_pixel": return outLen > 1 ? (Float(o) + 0.5) / s - 0.5 : 0
            case "align_corners": return outLen > 1 ? Float(o) * (inLen - 1) / (outLen - 1) : 0
            default: return Float(o) / s
            }
        }

        /// Linear interpolation on axis `d`: per output index, the lower and upper input index and the upper's weight.
        func linearTable(_ d: Int) -> (lo: [Int32], hi: [Int32], w: [Float]) {
            var lo: [Int32] = [], hi: [Int32] = [], w: [Float] = []
            for o in 0..<output[d] {
                let f = min(max(source(o, d), 0), Float(input[d] - 1))
                let i0 = Int(f.rounded(.down))
                lo.append(Int32(i0)); hi.append(Int32(min(i0 + 1, input[d] - 1))); w.append(f - Float(i0))
            }
            return (lo, hi, w)
        }

        /// Nearest on axis `d`: per output index, the input index (`rounding`: an ONNX `nearest_mode`).
        func nearestTable(_ d: Int, rounding: String) -> [Int] {
            (0..<output[d]).map { o in
                let f = source(o, d)
                var i: Int
                switch rounding {
                case "round_prefer_floor":
                    i = f == f.rounded(.down) + 0.5 ? Int(f.rounded(.down)) : Int(f.rounded())
                case "round_prefer_ceil":
                    i = Int(f.rounded(.toNearestOrAwayFromZero))
                    if f == f.rounded(.down) + 0.5 { i = Int(f.rounded(.up)) }
                case "floor": i = Int(f.rounded(.down))
                default: i = Int(f.rounded(.up))
                }
                return min(max(i, 0), input[d] - 1)
            }
        }
    }

    static func geometry(_ ctx: OpContext) throws -> Geometry {
        let x = try ctx.shape(0)
        let rank = x.count
        var scales: [Float]?
        var sizes: [Int]?
        if ctx.node.opType == "Upsample" {
            scales = ctx.opset < 9 ? try ctx.floats("scales") : try ctx.constFloats(1)
        } else if ctx.opset < 11 {
            scales = try ctx.constFloats(1)
        } else {
            if ctx.has(2), let s = try ctx.constFloats(2), !s.isEmpty { scales = s }
            if ctx.has(3), let s = try ctx.constInts(3), !s.isEmpty { sizes = s.map { Int($0) } }
        }
        if ctx.node.attributes["axes"] != nil { throw ctx.error("the axes attribute is not supported") }
        var out = x
        var scale = [Float](repeating: 1, count: rank)
        if let sizes {
            guard sizes.count == rank, sizes.allSatisfy({ $0 >= 1 }) else {
                throw ctx.error("sizes must have \(rank) positive values")
            }
            try LayoutOps.checkCount(sizes, ctx)
            let policy = try ctx.string("keep_aspect_ratio_policy", "stretch")
            guard policy == "stretch" else { throw ctx.error("keep_aspect_ratio_policy \(policy) is not supported") }
            out = sizes
            for d in 0..<rank { scale[d] = Float(sizes[d]) / Float(x[d]) }
        } else if let scales {
            guard scales.count == rank, scales.allSatisfy({ $0 > 0 }) else {
                throw ctx.error("scales must have \(rank) positive values")
            }
            scale = scales
            for d in 0..<rank {
                let size = (Double(x[d]) * Double(scales[d])).rounded(.down)
                guard size < Double(Int32.max) else {
                    throw ctx.error("scales \(scales) make output axis \(d) too large")
                }
                out[d] = Int(size)
            }
            try LayoutOps.checkCount(out, ctx)
            guard out.allSatisfy({ $0 >= 1 }) else { throw ctx.error("output would be empty") }
        } else {
            throw ctx.error("neither scales nor sizes given")
        }
        let mode = try ctx.string("mode", "nearest")
        let transform = try ctx.string(
            "coordinate_transformation_mode",
            ctx.node.opType == "Upsample" || ctx.opset < 11 ? "asymmetric" : "half_pixel")
        guard ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"].contains(transform) else {
            throw ctx.error("coordinate_transformation_mode \(transform) is not supported")
        }
        return Geometry(input: x, output: out, scale: scale, mode: mode, transform: transform)
    }

    static func plan(_ ctx: OpContext) throws -> OpPlan {
        let g = try geometry(ctx)
        let x = g.input, out = g.output, rank = x.count, mode = g.mode
        switch mode {
        case "nearest":
            let rounding = try ctx.string(
                "nearest_mode", ctx.node.opType == "Upsample" ? "floor" : "round_prefer_floor")
            let strides = contiguousStrides(x)
            guard ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"].contains(rounding) else {
                throw ctx.error("nearest_mode \(rounding) is not supported")
            }
            let tables = (0..<rank).map { g.nearestTable($0, rounding: rounding) }
            if rank >= 2, (0..<(rank - 2)).allSatisfy({ out[$0] == x[$0] && tables[$0] == Array(0..<x[$0]) }) {
                var plan = OpPlan(
                    outputShapes: [out],
                    build: { slots in
                        NearestPlaneKernel(
                            planes: x[..<(rank - 2)].reduce(1, *), inHeight: x[rank - 2],
                            inWidth: x[rank - 1], rows: tables[rank - 2], columns: tables[rank - 1],
                            input: slots.inputs[0]!, output: slots.outputs[0])
                    })
                plan.capturedInputs = [1, 2, 3]
                return plan
            }
            let map = try LayoutOps.map(out, ctx) { idx in
                var s = 0
                for d in 0..<rank { s += tables[d][idx[d]] * strides[d] }
                return s
            }
            return LayoutOps.plan(map, captured: [1, 2, 3])
        case "linear", "bilinear":
            guard rank >= 2, (0..<(rank - 2)).allSatisfy({ out[$0] == x[$0] }) else {
                throw ctx.error("linear resize is supported on the last two axes only")
            }
            let rows = g.linearTable(rank - 2), cols = g.linearTable(rank - 1)
            let planes = x[..<(rank - 2)].reduce(1, *)
            let inH = x[rank - 2], inW = x[rank - 1]
            let kernels = ctx.kernels
            var plan = OpPlan(
                outputShapes: [out],
                build: { slots in
                    BilinearKernel(
                        planes: planes, inHeight: inH, inWidth: inW, rows: rows, cols: cols,
                        input: slots.inputs[0]!, output: slots.outputs[0], scratch: slots.scratch, kernels: kernels)
                })
            plan.capturedInputs = [1, 2, 3]
            plan.scratchFloats = inW
            return plan
        default:
            throw ctx.error("resize mode \(mode) is not supported")
        }
    }
}

/// Linear resize on the last two axes, plane by plane: per output row, the two input rows it reads are blended
/// into one scratch row (`KernelSet.blendRows`, vectorised), then each output column interpolates two values of it
/// through the column tables. Owns its tables; the blended row lives in arena scratch; allocates nothing per run.
final class BilinearKernel: Kernel {
    let planes: Int, inHeight: Int, inWidth: Int
    let rows: (lo: [Int32], hi: [Int32], w: [Float])
    let cols: (lo: [Int32], hi: [Int32], w: [Float])
    let input: Int, output: Int, scratch: Int
    let kernels: any KernelSet.Type

    init(
        planes: Int, inHeight: Int, inWidth: Int, rows: (lo: [Int32], hi: [Int32], w: [Float]),
        cols: (lo: [Int32], hi: [Int32], w: [Float]), input: Int, output: Int, scratch: Int,
        kernels: any KernelSet.Type
    ) {
        self.planes = planes; self.inHeight = inHeight; self.inWidth = inWidth
        self.rows = rows; self.cols = cols; self.input = input; self.output = output; self.scratch = scratch
        self.kernels = kernels
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let outH = rows.w.count, outW = cols.w.count
        let blended = arena + scratch
        cols.lo.withUnsafeBufferPointer { lo in
            cols.hi.withUnsafeBufferPointer { hi in
                cols.w.withUnsafeBufferPointer { wx in
                    for p in 0..<planes {
                        let x = arena + input + p * inHeight * inWidth, y = arena + output + p * outH * outW
                        for oy in 0..<outH {
                            let r0 = x + Int(rows.lo[oy]) * inWidth, r1 = x + Int(rows.hi[oy]) * inWidth
                            kernels.blendRows(r0, r1, weight: rows.w[oy], into: blended, count: inWidth)
                            let dst = y + oy * outW
                            for ox in 0..<outW {
                                let a = blended[Int(lo[ox])], b = blended[Int(hi[ox])]
                                dst[ox] = a + (b - a) * wx[ox]
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Nearest resize on the last two axes (leading axes unchanged), plane by plane: an output row whose source row is
/// the previous output row's is a copy of it; other rows gather columns through a table (a run of equal source
/// columns, as in integer upscaling, repeats one load). Owns its tables; allocates nothing per run.
final class NearestPlaneKernel: Kernel {
    let planes: Int, inHeight: Int, inWidth: Int
    let rows: [Int], columns: [Int32]
    let input: Int, output: Int

    init(planes: Int, inHeight: Int, inWidth: Int, rows: [Int], columns: [Int], input: Int, output: Int) {
        self.planes = planes; self.inHeight = inHeight; self.inWidth = inWidth
        self.rows = rows; self.columns = columns.map { Int32($0) }
        self.input = input; self.output = output
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let outH = rows.count, outW = columns.count
        columns.withUnsafeBufferPointer { cols in
            for p in 0..<planes {
                let x = arena + input + p * inHeight * inWidth, y = arena + output + p * outH * outW
                for oy in 0..<outH {
                    let dst = y + oy * outW
                    if oy > 0 && rows[oy] == rows[oy - 1] {
                        dst.update(from: dst - outW, count: outW)
                        continue
                    }
                    let src = x + rows[oy] * inWidth
                    for ox in 0..<outW { dst[ox] = src[Int(cols[ox])] }
                }
            }
        }
    }
}
