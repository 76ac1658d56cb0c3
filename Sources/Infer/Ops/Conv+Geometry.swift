/// The geometry of a 2-D convolution (1-D convolutions are treated as height 1), in elements/pixels.
struct ConvGeometry {
    var batch = 1, inChannels = 1, inHeight = 1, inWidth = 1
    var outChannels = 1, group = 1
    var kernelHeight = 1, kernelWidth = 1
    var strideHeight = 1, strideWidth = 1
    var dilationHeight = 1, dilationWidth = 1
    var padTop = 0, padLeft = 0, padBottom = 0, padRight = 0
    var outHeight = 1, outWidth = 1
    /// Rank of the ONNX tensors (3 or 4).
    var rank = 4

    var inChannelsPerGroup: Int { inChannels / group }
    var outChannelsPerGroup: Int { outChannels / group }
    var kernelArea: Int { kernelHeight * kernelWidth }
    var outputShape: [Int] {
        rank == 3 ? [batch, outChannels, outWidth] : [batch, outChannels, outHeight, outWidth]
    }

    /// Largest kernel size, stride, dilation or pad accepted (elements). Far above any real model, and small enough
    /// that the geometry arithmetic (`(kernel − 1) · dilation + 1`, `in + pads − extent`, …) cannot overflow `Int`.
    static let maxSpatialAttribute = 1 << 20

    /// Throws unless `input` has rank 3 or 4 (N, C, then one or two spatial axes); call before indexing a shape.
    static func checkRank(_ ctx: OpContext, input: [Int]) throws {
        guard input.count == 3 || input.count == 4 else {
            throw ctx.error("input has rank \(input.count); only 1-D and 2-D spatial ops are supported")
        }
    }

    /// Reads the spatial attributes shared by Conv, ConvTranspose and the pools.
    /// - Parameters:
    ///   - input: the input shape (rank 3 or 4).
    ///   - kernel: kernel height and width.
    static func spatial(_ ctx: OpContext, input: [Int], kernel: [Int]) throws
        -> (strides: [Int], dilations: [Int], pads: [Int], autoPad: String)
    {
        try checkRank(ctx, input: input)
        let spatialRank = input.count - 2
        guard kernel.count == spatialRank else { throw ctx.error("kernel rank \(kernel.count) does not match input") }
        let strides = try ctx.ints("strides") ?? [Int](repeating: 1, count: spatialRank)
        let dilations = try ctx.ints("dilations") ?? [Int](repeating: 1, count: spatialRank)
        let pads = try ctx.ints("pads") ?? [Int](repeating: 0, count: 2 * spatialRank)
        let autoPad = try ctx.string("auto_pad", "NOTSET")
        let limit = maxSpatialAttribute
        guard strides.count == spatialRank, dilations.count == spatialRank, pads.count == 2 * spatialRank,
            strides.allSatisfy({ $0 >= 1 && $0 <= limit }), dilations.allSatisfy({ $0 >= 1 && $0 <= limit }),
            pads.allSatisfy({ $0 >= 0 && $0 <= limit }), kernel.allSatisfy({ $0 >= 1 && $0 <= limit })
        else { throw ctx.error("strides/dilations/pads/kernel_shape have wrong length or values (each 0…\(limit))") }
        guard ["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"].contains(autoPad) else {
            throw ctx.error("auto_pad \(autoPad) is not supported")
        }
        return (strides, dilations, pads, autoPad)
    }

    /// Geometry of a forward convolution or pool with `ceilMode` (pools only).
    static func forward(
        _ ctx: OpContext, input: [Int], outChannels: Int, kernel: [Int], group: Int,
        ceilMode: Bool = false
    ) throws -> ConvGeometry {
        let (strides, dilations, pads, autoPad) = try spatial(ctx, input: input, kernel: kernel)
        var g = ConvGeometry()
        g.rank = input.count
        g.batch = input[0]; g.inChannels = input[1]; g.outChannels = outChannels; g.group = group
        let is2D = input.count == 4
        g.inHeight = is2D ? input[2] : 1
        g.inWidth = input[input.count - 1]
        g.kernelHeight = is2D ? kernel[0] : 1; g.kernelWidth = kernel[kernel.count - 1]
        g.strideHeight = is2D ? strides[0] : 1; g.strideWidth = strides[strides.count - 1]
        g.dilationHeight = is2D ? dilations[0] : 1; g.dilationWidth = dilations[dilations.count - 1]
        if is2D {
            g.padTop = pads[0]; g.padLeft = pads[1]; g.padBottom = pads[2]; g.padRight = pads[3]
        } else {
            g.padLeft = pads[0]; g.padRight = pads[1]
        }
        func same(_ inSize: Int, _ stride: Int, _ extent: Int, lower: Bool) -> (Int, Int) {
            let out = (inSize + stride - 1) / stride
            let total = max(0, (out - 1) * stride + extent - inSize)
            return lower ? (total - total / 2, total / 2) : (total / 2, total - total / 2)
        }
        let extH = (g.kernelHeight - 1) * g.dilationHeight + 1
        let extW = (g.kernelWidth - 1) * g.dilationWidth + 1
        switch autoPad {
        case "VALID": g.padTop = 0; g.padLeft = 0; g.padBottom = 0; g.padRight = 0
        case "SAME_UPPER", "SAME_LOWER":
            let lower = autoPad == "SAME_LOWER"
            if is2D { (g.padTop, g.padBottom) = same(g.inHeight, g.strideHeight, extH, lower: lower) }
            (g.padLeft, g.padRight) = same(g.inWidth, g.strideWidth, extW, lower: lower)
        default: break
        }
        func outSize(_ inSize: Int, _ padSum: Int, _ extent: Int, _ stride: Int) -> Int {
            let span = inSize + padSum - extent
            if span < 0 { return 0 }
            return (ceilMode ? (span + stride - 1) / stride : span / stride) + 1
        }
        g.outHeight = outSize(g.inHeight, g.padTop + g.padBottom, extH, g.strideHeight)
        g.outWidth = outSize(g.inWidth, g.padLeft + g.padRight, extW, g.strideWidth)
        if ceilMode {  // a ceil-mode window must start inside the input or its leading padding
            let lastH = (g.outHeight - 1) * g.strideHeight
            if lastH >= g.inHeight + g.padTop { g.outHeight -= 1 }
            let lastW = (g.outWidth - 1) * g.strideWidth
            if lastW >= g.inWidth + g.padLeft { g.outWidth -= 1 }
        }
        guard g.outHeight >= 1 && g.outWidth >= 1 else { throw ctx.error("output would be empty for input \(input)") }
        try LayoutOps.checkCount(g.outputShape, ctx)
        return g
    }
}
