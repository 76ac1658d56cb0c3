import InferKernelSet

/// ONNX `Conv`: any kernel, stride, asymmetric pads, dilation and group (incl. depthwise); 1-D and 2-D.
///
/// Fast path, chosen per conv at load time (the table in the module README): a wide 3×3 stride-1 conv runs by
/// Winograd (`ConvWinogradKernel`), a depthwise one on `ConvDirectKernel`, a narrow one on `ConvTiledKernel`;
/// otherwise weights (with any folded BatchNorm) are packed once into an owned buffer; a 1×1 stride-1 unpadded conv
/// is one sgemm on the input, others build im2col strips of at most `stripFloats` in arena scratch and run sgemm
/// per strip, then apply bias + activation to the strip while it is in cache. Reference path: direct loops.
enum ConvOp {
    /// Target im2col strip size (floats, 512 KiB): a strip stays in L2/L3 between im2col and sgemm's packing of it.
    static let stripFloats = 1 << 17
    /// Hard cap on a strip (floats, 32 MiB), bounding the arena scratch.
    static let maxStripFloats = 1 << 23

    /// Columns per im2col strip: about `stripFloats / k`, but at least 8·m so that re-packing the m×k weights for
    /// every strip costs at most ~1/8 of the strip's arithmetic.
    static func stripColumns(m: Int, k: Int, columns: Int) -> Int {
        let cacheSized = stripFloats / max(1, k)
        let capped = maxStripFloats / max(1, k)
        return max(1, min(columns, min(capped, max(cacheSized, 8 * m))))
    }

    static func plan(_ ctx: OpContext) throws -> OpPlan {
        let x = try ctx.shape(0)
        let w = try ctx.shape(1)
        guard let weights = ctx.consts[1]?.floats else { throw ctx.error("weights (input 1) must be a float constant") }
        let group = try ctx.int("group", 1)
        try ConvGeometry.checkRank(ctx, input: x)
        guard w.count == x.count, w.allSatisfy({ $0 >= 1 }), x.allSatisfy({ $0 >= 1 }), group >= 1,
            x[1] % group == 0, w[0] % group == 0, w[1] * group == x[1]
        else {
            throw ctx.error("weights \(w) do not fit input \(x) with group \(group)")
        }
        let kernel = try ctx.ints("kernel_shape") ?? Array(w[2...])
        guard kernel == Array(w[2...]) else { throw ctx.error("kernel_shape \(kernel) does not match weights \(w)") }
        let g = try ConvGeometry.forward(ctx, input: x, outChannels: w[0], kernel: kernel, group: group)
        var bias: [Float]?
        if ctx.has(2) {
            guard let b = ctx.consts[2]?.floats else { throw ctx.error("bias (input 2) must be a float constant") }
            guard b.count == w[0] else { throw ctx.error("bias has \(b.count) values for \(w[0]) output channels") }
            bias = b
        }
        let activation = try fusedActivation(ctx)
        let k = g.inChannelsPerGroup * g.kernelArea
        let columns = g.outHeight * g.outWidth
        let direct =
            g.kernelArea == 1 && g.strideHeight == 1 && g.strideWidth == 1 && g.padTop == 0
            && g.padLeft == 0 && g.padBottom == 0 && g.padRight == 0
        let strip = stripColumns(m: g.outChannelsPerGroup, k: k, columns: columns)
        var plan = OpPlan(outputShapes: [g.outputShape], build: { _ in fatalError("replaced below") })
        plan.flops = 2 * Double(g.batch * g.outChannels * columns * k)
        plan.capturedInputs = [1, 2]
        let mode = ctx.mode, kernels = ctx.kernels
        let winograd = mode == .fast && ConvWinogradKernel.isPreferred(g)
        let thin = g.outChannelsPerGroup <= ConvDirectKernel.maxChannelsPerGroup && !direct && !winograd
        let tiled = !direct && !thin && !winograd && ConvTiledKernel.isPreferred(g, kernels: ctx.kernels)
        if winograd {
            plan.scratchFloats = ConvWinogradKernel.scratchFloats(g)
            plan.labelSuffix = " F(2x2,3x3)"
        } else if mode == .fast && !direct && !thin {
            plan.scratchFloats =
                tiled
                ? ConvTiledKernel.layout(g, kernels: ctx.kernels).scratchFloats(
                    g, tileChannels: ctx.kernels.tiledConvChannels)
                : k * strip
        }
        plan.build = { slots in
            if mode == .reference {
                return ConvReferenceKernel(
                    g, weights: weights, bias: bias, activation: activation,
                    input: slots.inputs[0]!, output: slots.outputs[0])
            }
            if winograd {
                return ConvWinogradKernel(
                    g, weights: weights, bias: bias, activation: activation, input: slots.inputs[0]!,
                    output: slots.outputs[0], scratch: slots.scratch, blas: try OpenBLAS.shared(), kernels: kernels)
            }
            if tiled {
                return ConvTiledKernel(
                    g, weights: weights, bias: bias, activation: activation,
                    input: slots.inputs[0]!, output: slots.outputs[0], scratch: slots.scratch, kernels: kernels)
            }
            if thin {
                return ConvDirectKernel(
                    g, weights: weights, bias: bias, activation: activation,
                    input: slots.inputs[0]!, output: slots.outputs[0], kernels: kernels)
            }
            return ConvGemmKernel(
                g, weights: weights, bias: bias, activation: activation, input: slots.inputs[0]!,
                output: slots.outputs[0], scratch: slots.scratch, stripColumns: strip,
                direct: direct, blas: try OpenBLAS.shared(), kernels: kernels)
        }
        return plan
    }

    /// The activation a load-time fusion pass attached to the node (`colorcam.activation`).
    static func fusedActivation(_ ctx: OpContext) throws -> FusedActivation {
        switch try ctx.string("colorcam.activation", "") {
        case "relu": return .relu
        case "leaky": return .leakyRelu(try ctx.float("colorcam.alpha", 0.01))
        case "clip": return .clip(try ctx.float("colorcam.min", -.infinity), try ctx.float("colorcam.max", .infinity))
        default: return .none
        }
    }
}

/// Copies `values` into a fresh owned buffer (freed by the owner's deinit).
func ownedCopy(_ values: [Float]) -> UnsafeMutablePointer<Float> {
    let p = UnsafeMutablePointer<Float>.allocate(capacity: max(1, values.count))
    values.withUnsafeBufferPointer { src in p.initialize(from: src.baseAddress!, count: values.count) }
    return p
}

/// Conv by im2col strips + sgemm with a fused bias/activation epilogue. Owns its packed weights.
final class ConvGemmKernel: Kernel {
    let g: ConvGeometry
    let weights: UnsafeMutablePointer<Float>
    let bias: UnsafeMutablePointer<Float>?
    let activation: Activation
    let input: Int, output: Int, scratch: Int, stripColumns: Int
    let direct: Bool
    let blas: OpenBLAS
    let kernels: any KernelSet.Type

    init(
        _ g: ConvGeometry, weights: [Float], bias: [Float]?, activation: FusedActivation, input: Int, output: Int,
        scratch: Int, stripColumns: Int, direct: Bool, blas: OpenBLAS, kernels: any KernelSet.Type
    ) {
        self.g = g
        self.weights = ownedCopy(weights)
        self.bias = bias.map(ownedCopy)
        self.activation = activation.form
        self.kernels = kernels
        self.input = input; self.output = output; self.scratch = scratch
        self.stripColumns = stripColumns; self.direct = direct; self.blas = blas
    }

    deinit {
        weights.deallocate()
        bias?.deallocate()
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let m = g.outChannelsPerGroup, cg = g.inChannelsPerGroup
        let k = cg * g.kernelArea
        let columns = g.outHeight * g.outWidth
        let inPlane = g.inHeight * g.inWidth
        for n in 0..<g.batch {
            for grp in 0..<g.group {
                let x = arena + input + (n * g.inChannels + grp * cg) * inPlane
                let y = arena + output + (n * g.outChannels + grp * m) * columns
                let a = weights + grp * m * k
                let b = bias.map { $0 + grp * m }
                if direct {
                    blas.sgemm(
                        transA: false, transB: false, m: m, n: columns, k: k, alpha: 1, a: a, lda: k,
                        b: x, ldb: columns, beta: 0, c: y, ldc: columns)
                    kernels.biasActivate(
                        y, rows: m, rowLength: columns, rowStride: columns, bias: b, activation: activation)
                    continue
                }
                var start = 0
                while start < columns {
                    let count = min(stripColumns, columns - start)
                    let col = arena + scratch
                    im2col(x, into: col, start: start, count: count)
                    blas.sgemm(
                        transA: false, transB: false, m: m, n: count, k: k, alpha: 1, a: a, lda: k,
                        b: col, ldb: count, beta: 0, c: y + start, ldc: columns)
                    kernels.biasActivate(
                        y + start, rows: m, rowLength: count, rowStride: columns, bias: b, activation: activation)
                    start += count
                }
            }
        }
    }

    /// Writes rows (c, ky, kx) × output columns [start, start+count) of the im2col matrix of one group's input.
    @inline(__always)
    func im2col(_ x: UnsafeMutablePointer<Float>, into col: UnsafeMutablePointer<Float>, start: Int, count: Int) {
        let outW = g.outWidth, inW = g.inWidth, inH = g.inHeight
        let sw = g.strideWidth, sh = g.strideHeight
        var row = 0
        for c in 0..<g.inChannelsPerGroup {
            let plane = x + c * inH * inW
            for ky in 0..<g.kernelHeight {
                let offY = ky * g.dilationHeight - g.padTop
                for kx in 0..<g.kernelWidth {
                    let offX = kx * g.dilationWidth - g.padLeft
                    // Output columns whose input x = ox*sw + offX lies in [0, inW).
                    let oxLo = offX >= 0 ? 0 : (-offX + sw - 1) / sw
                    let oxHi = inW - 1 - offX < 0 ? -1 : min(outW - 1, (inW - 1 - offX) / sw)
                    let dst = col + row * count
                    var j = 0
                    var oy = start / outW
                    var ox = start - oy * outW
                    while j < count {
                        let run = min(outW - ox, count - j)
                        let iy = oy * sh + offY
                        let d = dst + j
                        if iy < 0 || iy >= inH || oxHi < oxLo {
                            d.update(repeating: 0, count: run)
                        } else {
                            let src = plane + iy * inW + offX
                            let lo = max(ox, oxLo), hi = min(ox + run - 1, oxHi)
                            if lo > hi {
                                d.update(repeating: 0, count: run)
                            } else {
                                if lo > ox { d.update(repeating: 0, count: lo - ox) }
                                if sw == 1 {
                                    (d + (lo - ox)).update(from: src + lo, count: hi - lo + 1)
                                } else {
                                    for o in lo...hi { d[o - ox] = src[o * sw] }
                                }
                                if hi < ox + run - 1 {
                                    (d + (hi + 1 - ox)).update(repeating: 0, count: ox + run - 1 - hi)
                                }
                            }
                        }
                        j += run
                        ox = 0
                        oy += 1
                    }
                    row += 1
                }
            }
        }
    }
}

/// Conv by direct loops (the reference the fast path is tested against).
final class ConvReferenceKernel: Kernel {
    let g: ConvGeometry
    let weights: [Float], bias: [Float]?
    let activation: FusedActivation
    let input: Int, output: Int

    init(_ g: ConvGeometry, weights: [Float], bias: [Float]?, activation: FusedActivation, input: Int, output: Int) {
        self.g = g; self.weights = weights; self.bias = bias; self.activation = activation
        self.input = input; self.output = output
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let cg = g.inChannelsPerGroup, m = g.outChannelsPerGroup
        for n in 0..<g.batch {
            for oc in 0..<g.outChannels {
                let grp = oc / m
                for oy in 0..<g.outHeight {
                    for ox in 0..<g.outWidth {
                        var sum: Float = bias?[oc] ?? 0
                        for c in 0..<cg {
                            let ic = grp * cg + c
                            for ky in 0..<g.kernelHeight {
                                let iy = oy * g.strideHeight - g.padTop + ky * g.dilationHeight
                                if iy < 0 || iy >= g.inHeight { continue }
                                for kx in 0..<g.kernelWidth {
                                    let ix = ox * g.strideWidth - g.padLeft + kx * g.dilationWidth
                                    if ix < 0 || ix >= g.inWidth { continue }
                                    let xv = arena[input + ((n * g.inChannels + ic) * g.inHeight + iy) * g.inWidth + ix]
                                    let wv = weights[((oc * cg + c) * g.kernelHeight + ky) * g.kernelWidth + kx]
                                    sum += xv * wv
                                }
                            }
                        }
                        arena[output + ((n * g.outChannels + oc) * g.outHeight + oy) * g.outWidth + ox] =
                            activation.apply(sum)
                    }
                }
            }
        }
    }
}
