import InferKernelSet

/// ONNX `ConvTranspose` (2-D and 1-D): strides, dilations, pads, output_padding, output_shape, auto_pad, group.
///
/// Fast path: one sgemm per group makes the column matrix `Wᵀ·X` (arena scratch), then col2im scatters it into the
/// output, which starts as the bias. Reference path: direct scatter loops.
enum ConvTransposeOp {
    static func plan(_ ctx: OpContext) throws -> OpPlan {
        let x = try ctx.shape(0)
        let w = try ctx.shape(1)
        guard let weights = ctx.consts[1]?.floats else { throw ctx.error("weights (input 1) must be a float constant") }
        let group = try ctx.int("group", 1)
        try ConvGeometry.checkRank(ctx, input: x)
        guard w.count == x.count, w.allSatisfy({ $0 >= 1 }), x.allSatisfy({ $0 >= 1 }), group >= 1, w[0] == x[1],
            x[1] % group == 0
        else {
            throw ctx.error("weights \(w) do not fit input \(x) with group \(group)")
        }
        let kernel = try ctx.ints("kernel_shape") ?? Array(w[2...])
        guard kernel == Array(w[2...]) else { throw ctx.error("kernel_shape \(kernel) does not match weights \(w)") }
        let (strides, dilations, padsIn, autoPad) = try ConvGeometry.spatial(ctx, input: x, kernel: kernel)
        let spatial = x.count - 2
        let outputPadding = try ctx.ints("output_padding") ?? [Int](repeating: 0, count: spatial)
        let outputShapeAttr = try ctx.ints("output_shape")
        let limit = ConvGeometry.maxSpatialAttribute
        guard outputPadding.count == spatial, outputPadding.allSatisfy({ $0 >= 0 && $0 <= limit }) else {
            throw ctx.error("output_padding has wrong length or values")
        }
        if let o = outputShapeAttr, o.count < spatial || !o.suffix(spatial).allSatisfy({ $0 >= 1 && $0 < 1 << 30 }) {
            throw ctx.error("output_shape \(o) does not give \(spatial) spatial sizes")
        }
        var pads = padsIn
        var outSizes = [Int](repeating: 0, count: spatial)
        for i in 0..<spatial {
            let extent = (kernel[i] - 1) * dilations[i] + 1
            let full = strides[i] * (x[2 + i] - 1) + outputPadding[i] + extent
            var target: Int?
            if let o = outputShapeAttr {
                target = o[o.count - spatial + i]
            } else if autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" {
                target = x[2 + i] * strides[i]
            }
            if let target {
                let total = full - target
                if autoPad == "SAME_UPPER" {
                    pads[i] = total / 2; pads[i + spatial] = total - total / 2
                } else {
                    pads[i] = total - total / 2; pads[i + spatial] = total / 2
                }
                outSizes[i] = target
            } else {
                if autoPad == "VALID" { pads[i] = 0; pads[i + spatial] = 0 }
                outSizes[i] = full - pads[i] - pads[i + spatial]
            }
            guard outSizes[i] >= 1 else { throw ctx.error("output would be empty") }
        }
        var g = ConvGeometry()
        g.rank = x.count
        g.batch = x[0]; g.inChannels = x[1]; g.outChannels = w[1] * group; g.group = group
        let is2D = spatial == 2
        g.inHeight = is2D ? x[2] : 1; g.inWidth = x[x.count - 1]
        g.kernelHeight = is2D ? kernel[0] : 1; g.kernelWidth = kernel[spatial - 1]
        g.strideHeight = is2D ? strides[0] : 1; g.strideWidth = strides[spatial - 1]
        g.dilationHeight = is2D ? dilations[0] : 1; g.dilationWidth = dilations[spatial - 1]
        g.padTop = is2D ? pads[0] : 0; g.padLeft = pads[spatial - 1]
        g.outHeight = is2D ? outSizes[0] : 1; g.outWidth = outSizes[spatial - 1]
        var bias: [Float]?
        if ctx.has(2) {
            guard let b = ctx.consts[2]?.floats, b.count == g.outChannels else {
                throw ctx.error("bias (input 2) must be a float constant with \(g.outChannels) values")
            }
            bias = b
        }
        let activation = try ConvOp.fusedActivation(ctx)
        let rows = g.outChannelsPerGroup * g.kernelArea
        var plan = OpPlan(outputShapes: [g.outputShape], build: { _ in fatalError("replaced below") })
        plan.flops = 2 * Double(g.batch * g.inChannels * g.inHeight * g.inWidth * rows)
        plan.capturedInputs = [1, 2]
        let mode = ctx.mode, kernels = ctx.kernels
        if mode == .fast { plan.scratchFloats = rows * g.inHeight * g.inWidth }
        plan.build = { slots in
            ConvTransposeKernel(
                g, weights: weights, bias: bias, activation: activation, input: slots.inputs[0]!,
                output: slots.outputs[0], scratch: slots.scratch,
                blas: mode == .fast ? try OpenBLAS.shared() : nil, kernels: kernels)
        }
        return plan
    }
}

/// ConvTranspose; with `blas` it uses sgemm + col2im, without it direct loops (reference).
final class ConvTransposeKernel: Kernel {
    let g: ConvGeometry
    let weights: UnsafeMutablePointer<Float>
    let bias: [Float]?
    let activation: FusedActivation
    let input: Int, output: Int, scratch: Int
    let blas: OpenBLAS?
    let kernels: any KernelSet.Type

    init(
        _ g: ConvGeometry, weights: [Float], bias: [Float]?, activation: FusedActivation, input: Int, output: Int,
        scratch: Int, blas: OpenBLAS?, kernels: any KernelSet.Type
    ) {
        self.g = g; self.weights = ownedCopy(weights); self.bias = bias; self.activation = activation
        self.input = input; self.output = output; self.scratch = scratch; self.blas = blas; self.kernels = kernels
    }

    deinit { weights.deallocate() }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let inPlane = g.inHeight * g.inWidth, outPlane = g.outHeight * g.outWidth
        let cg = g.inChannelsPerGroup, mg = g.outChannelsPerGroup, area = g.kernelArea
        let rows = mg * area
        for n in 0..<g.batch {
            let y = arena + output + n * g.outChannels * outPlane
            for oc in 0..<g.outChannels { (y + oc * outPlane).update(repeating: bias?[oc] ?? 0, count: outPlane) }
            for grp in 0..<g.group {
                let x = arena + input + (n * g.inChannels + grp * cg) * inPlane
                let w = weights + grp * cg * rows
                if let blas {
                    let col = arena + scratch
                    blas.sgemm(
                        transA: true, transB: false, m: rows, n: inPlane, k: cg, alpha: 1, a: w, lda: rows,
                        b: x, ldb: inPlane, beta: 0, c: col, ldc: inPlane)
                    for r in 0..<rows {
                        let oc = grp * mg + r / area
                        let ky = (r % area) / g.kernelWidth, kx = r % g.kernelWidth
                        let dst = y + oc * outPlane
                        let src = col + r * inPlane
                        for iy in 0..<g.inHeight {
                            let oy = iy * g.strideHeight - g.padTop + ky * g.dilationHeight
                            if oy < 0 || oy >= g.outHeight { continue }
                            let drow = dst + oy * g.outWidth
                            let srow = src + iy * g.inWidth
                            for ix in 0..<g.inWidth {
                                let ox = ix * g.strideWidth - g.padLeft + kx * g.dilationWidth
                                if ox >= 0 && ox < g.outWidth { drow[ox] += srow[ix] }
                            }
                        }
                    }
                } else {
                    for c in 0..<cg {
                        for iy in 0..<g.inHeight {
                            for ix in 0..<g.inWidth {
                                let xv = x[(c * g.inHeight + iy) * g.inWidth + ix]
                                for m in 0..<mg {
                                    let dst = y + (grp * mg + m) * outPlane
                                    for ky in 0..<g.kernelHeight {
                                        let oy = iy * g.strideHeight - g.padTop + ky * g.dilationHeight
                                        if oy < 0 || oy >= g.outHeight { continue }
                                        for kx in 0..<g.kernelWidth {
                                            let ox = ix * g.strideWidth - g.padLeft + kx * g.dilationWidth
                                            if ox < 0 || ox >= g.outWidth { continue }
                                            dst[oy * g.outWidth + ox] +=
                                                xv * w[((c * mg + m) * g.kernelHeight + ky) * g.kernelWidth + kx]
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            if activation != .none {
                kernels.biasActivate(
                    y, rows: 1, rowLength: g.outChannels * outPlane, rowStride: 0, bias: nil,
                    activation: activation.form)
            }
        }
    }
}
