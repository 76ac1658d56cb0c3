import InferKernelSet

/// MaxPool, AveragePool (kernel, strides, pads, dilations for max, ceil_mode, count_include_pad, auto_pad) and
/// GlobalAveragePool, on 1-D and 2-D NC(H)W tensors.
enum PoolOp {
    static func plan(_ ctx: OpContext, max isMax: Bool) throws -> OpPlan {
        let x = try ctx.shape(0)
        try ConvGeometry.checkRank(ctx, input: x)
        guard let kernel = try ctx.ints("kernel_shape") else { throw ctx.error("kernel_shape is required") }
        if isMax && ctx.node.outputs.count > 1 && !ctx.node.outputs[1].isEmpty {
            throw ctx.error("the Indices output is not supported")
        }
        if !isMax && ctx.node.attributes["dilations"] != nil, try ctx.ints("dilations")!.contains(where: { $0 != 1 }) {
            throw ctx.error("AveragePool dilations are not supported")
        }
        let g = try ConvGeometry.forward(
            ctx, input: x, outChannels: x[1], kernel: kernel, group: x[1],
            ceilMode: try ctx.int("ceil_mode", 0) != 0)
        let includePad = try ctx.int("count_include_pad", 0) != 0
        let kernels = ctx.kernels
        return OpPlan(
            outputShapes: [g.outputShape],
            build: { slots in
                PoolKernel(
                    g, isMax: isMax, includePad: includePad, input: slots.inputs[0]!, output: slots.outputs[0],
                    kernels: kernels)
            })
    }

    static func planGlobalAverage(_ ctx: OpContext) throws -> OpPlan {
        let x = try ctx.shape(0)
        guard x.count >= 3 else { throw ctx.error("input must have spatial axes") }
        let inner = x[2...].reduce(1, *)
        let out = [x[0], x[1]] + [Int](repeating: 1, count: x.count - 2)
        return OpPlan(
            outputShapes: [out],
            build: { slots in
                GlobalAverageKernel(
                    planes: x[0] * x[1], inner: inner, input: slots.inputs[0]!, output: slots.outputs[0])
            })
    }
}

final class PoolKernel: Kernel {
    let g: ConvGeometry
    let isMax: Bool, includePad: Bool
    let input: Int, output: Int

    let kernels: any KernelSet.Type

    init(_ g: ConvGeometry, isMax: Bool, includePad: Bool, input: Int, output: Int, kernels: any KernelSet.Type) {
        self.g = g; self.isMax = isMax; self.includePad = includePad; self.input = input; self.output = output
        self.kernels = kernels
    }

    /// A 2×2 stride-2 max pool whose windows all lie inside the input (the U-Net's downsampling).
    var isMax2x2: Bool {
        isMax && g.kernelHeight == 2 && g.kernelWidth == 2 && g.strideHeight == 2 && g.strideWidth == 2
            && g.dilationHeight == 1 && g.dilationWidth == 1 && g.padTop == 0 && g.padLeft == 0
            && 2 * g.outHeight <= g.inHeight && 2 * g.outWidth <= g.inWidth
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let inPlane = g.inHeight * g.inWidth, outPlane = g.outHeight * g.outWidth
        if isMax2x2 {
            runMax2x2(arena)
            return
        }
        for plane in 0..<(g.batch * g.inChannels) {
            let x = arena + input + plane * inPlane, y = arena + output + plane * outPlane
            for oy in 0..<g.outHeight {
                for ox in 0..<g.outWidth {
                    let y0 = oy * g.strideHeight - g.padTop, x0 = ox * g.strideWidth - g.padLeft
                    if isMax {
                        var m = -Float.infinity
                        for ky in 0..<g.kernelHeight {
                            let iy = y0 + ky * g.dilationHeight
                            if iy < 0 || iy >= g.inHeight { continue }
                            for kx in 0..<g.kernelWidth {
                                let ix = x0 + kx * g.dilationWidth
                                if ix < 0 || ix >= g.inWidth { continue }
                                m = max(m, x[iy * g.inWidth + ix])
                            }
                        }
                        y[oy * g.outWidth + ox] = m
                    } else {
                        let y1 = min(y0 + g.kernelHeight, g.inHeight + g.padBottom)
                        let x1 = min(x0 + g.kernelWidth, g.inWidth + g.padRight)
                        let padded = (y1 - y0) * (x1 - x0)
                        let ys = max(y0, 0), ye = min(y1, g.inHeight), xs = max(x0, 0), xe = min(x1, g.inWidth)
                        var sum: Float = 0
                        if ys < ye && xs < xe {
                            for iy in ys..<ye { for ix in xs..<xe { sum += x[iy * g.inWidth + ix] } }
                        }
                        let count = includePad ? padded : max(0, ye - ys) * max(0, xe - xs)
                        y[oy * g.outWidth + ox] = count > 0 ? sum / Float(count) : 0
                    }
                }
            }
        }
    }
}

extension PoolKernel {
    /// 2×2 stride-2 max, a row at a time (`KernelSet.maxPool2x2Row`: the larger of two rows, a double vector of
    /// columns at a time, then the larger of even and odd lanes).
    func runMax2x2(_ arena: UnsafeMutablePointer<Float>) {
        let inW = g.inWidth, outW = g.outWidth, inPlane = g.inHeight * inW, outPlane = g.outHeight * outW
        for plane in 0..<(g.batch * g.inChannels) {
            let x = arena + input + plane * inPlane, y = arena + output + plane * outPlane
            for oy in 0..<g.outHeight {
                kernels.maxPool2x2Row(x + 2 * oy * inW, x + (2 * oy + 1) * inW, y + oy * outW, count: outW)
            }
        }
    }
}

final class GlobalAverageKernel: Kernel {
    let planes: Int, inner: Int, input: Int, output: Int

    init(planes: Int, inner: Int, input: Int, output: Int) {
        self.planes = planes; self.inner = inner; self.input = input; self.output = output
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        for p in 0..<planes {
            let x = arena + input + p * inner
            var sum: Float = 0
            for i in 0..<inner { sum += x[i] }
            arena[output + p] = sum / Float(inner)
        }
    }
}
