#if canImport(Glibc)
    import Glibc
#endif

/// Direct convolution in register tiles, for 2-D (and 1-D) convs with a few to a few dozen channels, where im2col +
/// sgemm spends its time writing and re-reading a 9×-larger im2col matrix and sgemm runs at small M and K.
///
/// Per group, output rows are computed in bands. For a band, the input rows it needs (all the group's channels) are
/// copied once into arena scratch, zero-padded left/right/top/bottom and, for a horizontal stride `s`, split into
/// `s` phase rows (`phase[p][q] = padded[q·s + p]`), so that every kernel tap of every output column is a
/// contiguous, in-bounds load. The inner kernel keeps a tile of 4 output channels × 16 output columns (8 SIMD8
/// accumulators) in registers over all input channels and taps: one broadcast weight per output channel and two
/// loads per tap feed eight fused multiply-adds. Bias is the accumulators' initial value and the activation is
/// applied before the single store. Columns past the row end are computed on padding and not stored.
///
/// Layouts: input and output NCHW in the arena; packed weights `[group][block of 4 oc][c][ky][kx][4]`
/// (zero-padded), owned by the kernel; band scratch `[c][row][phase][phaseLength]` in the arena's scratch region.
/// Threading: `run` touches only its arena slots and scratch; one thread at a time.
final class ConvTiledKernel: Kernel {
    typealias Vector = SIMD8<Float>
    /// Output channels per register tile.
    static let tileChannels = 4
    /// Output columns per register tile (two SIMD8 vectors).
    static let tileColumns = 16
    /// Target band scratch size in floats (128 KiB): the band is written once and read by every tap and channel
    /// block from L2.
    static let bandFloats = 1 << 15

    let g: ConvGeometry
    let packed: UnsafeMutablePointer<Float>
    /// Bias per output channel, zero-padded to whole tiles (zeros when the conv has no bias).
    let bias: UnsafeMutablePointer<Float>
    let activation: FusedActivation
    /// The activation as slope-below-zero then clamp (none: 1, −∞, ∞; relu: 1, 0, ∞; leaky: α, −∞, ∞; clip: 1, lo,
    /// hi), branch-free so that it inlines into the tile store (a call per vector measured ~30% on 8-channel convs).
    let negativeSlope: Float, low: Float, high: Float
    let input: Int, output: Int, scratch: Int
    let blocks: Int
    /// Floats per phase row (output tiles rounded up, plus the widest tap offset).
    let phaseLength: Int
    /// Output rows per band.
    let bandOutputRows: Int
    /// Per kx: offset of the tap inside a padded input row group (`phase · phaseLength + offset / stride`).
    let tapOffsets: UnsafeMutablePointer<Int>

    /// Geometry-derived sizes, shared by the planner (scratch size) and the kernel.
    struct Layout {
        var phaseLength: Int, bandOutputRows: Int

        init(_ g: ConvGeometry) {
            let tiles = (g.outWidth + ConvTiledKernel.tileColumns - 1) / ConvTiledKernel.tileColumns
            let widestTap = ((g.kernelWidth - 1) * g.dilationWidth) / g.strideWidth
            phaseLength = tiles * ConvTiledKernel.tileColumns + widestTap + 1
            let rowFloats = g.inChannelsPerGroup * g.strideWidth * phaseLength
            bandOutputRows = min(g.outHeight, max(1, ConvTiledKernel.bandFloats / max(1, rowFloats * g.strideHeight)))
        }

        /// Padded input rows a band of `outputRows` output rows reads.
        func bandRows(_ g: ConvGeometry, outputRows: Int) -> Int {
            (outputRows - 1) * g.strideHeight + (g.kernelHeight - 1) * g.dilationHeight + 1
        }

        func scratchFloats(_ g: ConvGeometry) -> Int {
            g.inChannelsPerGroup * g.strideWidth * phaseLength * bandRows(g, outputRows: bandOutputRows)
        }
    }

    init(
        _ g: ConvGeometry, weights: [Float], bias: [Float]?, activation: FusedActivation, input: Int, output: Int,
        scratch: Int
    ) {
        self.g = g
        self.activation = activation
        switch activation {
        case .none: (negativeSlope, low, high) = (1, -.infinity, .infinity)
        case .relu: (negativeSlope, low, high) = (1, 0, .infinity)
        case .leakyRelu(let a): (negativeSlope, low, high) = (a, -.infinity, .infinity)
        case .clip(let lo, let hi): (negativeSlope, low, high) = (1, lo, hi)
        }
        self.input = input; self.output = output; self.scratch = scratch
        let m = g.outChannelsPerGroup, taps = g.inChannelsPerGroup * g.kernelArea, tc = Self.tileChannels
        blocks = (m + tc - 1) / tc
        let packedCount = g.group * blocks * taps * tc
        packed = UnsafeMutablePointer<Float>.allocate(capacity: packedCount)
        packed.initialize(repeating: 0, count: packedCount)
        for grp in 0..<g.group {
            for o in 0..<m {
                for t in 0..<taps {
                    packed[((grp * blocks + o / tc) * taps + t) * tc + o % tc] = weights[(grp * m + o) * taps + t]
                }
            }
        }
        self.bias = UnsafeMutablePointer<Float>.allocate(capacity: g.group * blocks * tc)
        self.bias.initialize(repeating: 0, count: g.group * blocks * tc)
        if let bias {
            for grp in 0..<g.group { for o in 0..<m { self.bias[grp * blocks * tc + o] = bias[grp * m + o] } }
        }
        let layout = Layout(g)
        phaseLength = layout.phaseLength
        bandOutputRows = layout.bandOutputRows
        tapOffsets = UnsafeMutablePointer<Int>.allocate(capacity: g.kernelWidth)
        for kx in 0..<g.kernelWidth {
            let offset = kx * g.dilationWidth
            tapOffsets[kx] = (offset % g.strideWidth) * phaseLength + offset / g.strideWidth
        }
    }

    deinit {
        packed.deallocate()
        bias.deallocate()
        tapOffsets.deallocate()
    }

    /// Copies padded input rows `[firstRow, firstRow + rows)` (padded coordinates) of one group into the band.
    func fillBand(_ x: UnsafePointer<Float>, band: UnsafeMutablePointer<Float>, firstRow: Int, rows: Int) {
        let inPlane = g.inHeight * g.inWidth, sw = g.strideWidth, inW = g.inWidth, padL = g.padLeft
        for c in 0..<g.inChannelsPerGroup {
            for r in 0..<rows {
                let iy = firstRow + r - g.padTop
                let dst = band + (c * rows + r) * sw * phaseLength
                if iy < 0 || iy >= g.inHeight {
                    dst.update(repeating: 0, count: sw * phaseLength)
                    continue
                }
                let src = x + c * inPlane + iy * inW
                if sw == 1 {
                    let lead = min(padL, phaseLength)
                    dst.update(repeating: 0, count: lead)
                    let count = max(0, min(inW, phaseLength - lead))
                    (dst + lead).update(from: src, count: count)
                    (dst + lead + count).update(repeating: 0, count: phaseLength - lead - count)
                } else {
                    for p in 0..<sw {
                        let row = dst + p * phaseLength
                        for q in 0..<phaseLength {
                            let ix = q * sw + p - padL
                            row[q] = ix >= 0 && ix < inW ? src[ix] : 0
                        }
                    }
                }
            }
        }
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let cg = g.inChannelsPerGroup, m = g.outChannelsPerGroup
        let inPlane = g.inHeight * g.inWidth, outPlane = g.outHeight * g.outWidth
        let band = arena + scratch
        let layout = Layout(g)
        for n in 0..<g.batch {
            for grp in 0..<g.group {
                let x = arena + input + (n * g.inChannels + grp * cg) * inPlane
                let y = arena + output + (n * g.outChannels + grp * m) * outPlane
                var oy0 = 0
                while oy0 < g.outHeight {
                    let count = min(bandOutputRows, g.outHeight - oy0)
                    let rows = layout.bandRows(g, outputRows: count)
                    fillBand(x, band: band, firstRow: oy0 * g.strideHeight, rows: rows)
                    for oy in oy0..<(oy0 + count) {
                        for b in 0..<blocks {
                            let rowStride = g.strideWidth * phaseLength
                            tileRow(
                                source: band + (oy - oy0) * g.strideHeight * rowStride,
                                channelStride: rows * rowStride, rowStride: rowStride, columns: g.outWidth,
                                block: grp * blocks + b,
                                channels: min(Self.tileChannels, m - b * Self.tileChannels),
                                y: y + b * Self.tileChannels * outPlane + oy * g.outWidth, outPlane: outPlane)
                        }
                    }
                    oy0 += count
                }
            }
        }
    }

    /// `columns` output columns (one row) of one block of up to 4 output channels, in tiles of 16 columns.
    /// `source` is the first tap row of channel 0; a tile reads 16 + the widest tap offset floats per tap row, so
    /// every tile must be readable in full (padded band rows, or whole tiles only on an unpadded plane).
    @inline(__always)
    func tileRow(
        source: UnsafeMutablePointer<Float>, channelStride: Int, rowStride: Int, columns outW: Int, block: Int,
        channels: Int, y: UnsafeMutablePointer<Float>, outPlane: Int
    ) {
        let tc = Self.tileChannels, cg = g.inChannelsPerGroup, kh = g.kernelHeight, kw = g.kernelWidth
        let taps = cg * kh * kw
        let dh = g.dilationHeight
        let weights = UnsafePointer(packed + block * taps * tc)
        let b = bias + block * tc
        let t0 = tapOffsets[0], t1 = kw > 1 ? tapOffsets[1] : 0, t2 = kw > 2 ? tapOffsets[2] : 0
        var ox = 0
        while ox < outW {
            var a00 = Vector(repeating: b[0]), a10 = Vector(repeating: b[1])
            var a20 = Vector(repeating: b[2]), a30 = Vector(repeating: b[3])
            var a01 = a00, a11 = a10, a21 = a20, a31 = a30
            @inline(__always) func tap(_ s: UnsafePointer<Float>, _ w: UnsafePointer<Float>) {
                let s0 = UnsafeRawPointer(s).loadUnaligned(as: Vector.self)
                let s1 = UnsafeRawPointer(s + 8).loadUnaligned(as: Vector.self)
                let w0 = Vector(repeating: w[0]), w1 = Vector(repeating: w[1])
                let w2 = Vector(repeating: w[2]), w3 = Vector(repeating: w[3])
                a00 = a00.addingProduct(s0, w0); a01 = a01.addingProduct(s1, w0)
                a10 = a10.addingProduct(s0, w1); a11 = a11.addingProduct(s1, w1)
                a20 = a20.addingProduct(s0, w2); a21 = a21.addingProduct(s1, w2)
                a30 = a30.addingProduct(s0, w3); a31 = a31.addingProduct(s1, w3)
            }
            var w = weights
            if kh == 3 && kw == 3 {  // the common case: all nine taps of a channel unrolled
                let r1 = dh * rowStride, r2 = 2 * dh * rowStride
                for c in 0..<cg {
                    let row = UnsafePointer(source + c * channelStride + ox)
                    tap(row + t0, w); tap(row + t1, w + tc); tap(row + t2, w + 2 * tc)
                    tap(row + r1 + t0, w + 3 * tc); tap(row + r1 + t1, w + 4 * tc); tap(row + r1 + t2, w + 5 * tc)
                    tap(row + r2 + t0, w + 6 * tc); tap(row + r2 + t1, w + 7 * tc); tap(row + r2 + t2, w + 8 * tc)
                    w += 9 * tc
                }
            } else {
                for c in 0..<cg {
                    for ky in 0..<kh {
                        let row = UnsafePointer(source + c * channelStride + ky * dh * rowStride + ox)
                        if kw == 3 {
                            tap(row + t0, w); tap(row + t1, w + tc); tap(row + t2, w + 2 * tc)
                            w += 3 * tc
                        } else {
                            for kx in 0..<kw {
                                tap(row + tapOffsets[kx], w)
                                w += tc
                            }
                        }
                    }
                }
            }
            let valid = min(Self.tileColumns, outW - ox)
            let d = y + ox
            let slope = Vector(repeating: negativeSlope), lo = Vector(repeating: low), hi = Vector(repeating: high)
            store(activate(a00, slope, lo, hi), activate(a01, slope, lo, hi), to: d, valid: valid)
            if channels > 1 {
                store(activate(a10, slope, lo, hi), activate(a11, slope, lo, hi), to: d + outPlane, valid: valid)
            }
            if channels > 2 {
                store(activate(a20, slope, lo, hi), activate(a21, slope, lo, hi), to: d + 2 * outPlane, valid: valid)
            }
            if channels > 3 {
                store(activate(a30, slope, lo, hi), activate(a31, slope, lo, hi), to: d + 3 * outPlane, valid: valid)
            }
            ox += Self.tileColumns
        }
    }

    /// Stores the first `valid` (≤ 16) lanes of `lo ++ hi` at `d`.
    @inline(__always)
    func store(_ lo: Vector, _ hi: Vector, to d: UnsafeMutablePointer<Float>, valid: Int) {
        if valid == 16 {
            UnsafeMutableRawPointer(d).storeBytes(of: lo, as: Vector.self)
            UnsafeMutableRawPointer(d + 8).storeBytes(of: hi, as: Vector.self)
            return
        }
        for i in 0..<min(valid, 8) { d[i] = lo[i] }
        if valid > 8 { for i in 8..<valid { d[i] = hi[i - 8] } }
    }
}

/// Slope below zero, then clamp to [low, high] (the tiled conv's fused activation). `@_transparent` because
/// `@inline(__always)` was not honoured in `tileRow` (8 calls per tile, each splitting the vector across the ABI,
/// showed in profiles).
@_transparent
func activate(_ v: SIMD8<Float>, _ slope: SIMD8<Float>, _ low: SIMD8<Float>, _ high: SIMD8<Float>) -> SIMD8<Float> {
    let leaky = v.replacing(with: v * slope, where: v .< 0)
    let clamped = leaky.replacing(with: low, where: leaky .< low)
    return clamped.replacing(with: high, where: clamped .> high)
}

extension ConvTiledKernel {
    /// Whether the tiled direct kernel should run this conv instead of im2col + sgemm (chosen at load time).
    ///
    /// Measured on this project's models (CPU time, AMD EPYC, 1 thread, OpenBLAS Haswell core): the tiled kernel
    /// wins while a group has few channels (K = cg·kh·kw small, M small), where sgemm runs at 20–45 GFLOP/s;
    /// sgemm wins on wide layers (ECCV16's 256–512 channels run at ~70 GFLOP/s).
    static func isPreferred(_ g: ConvGeometry, override: Bool? = tiledOverride) -> Bool {
        if let override { return override }
        return g.outChannelsPerGroup <= 64 && g.inChannelsPerGroup * g.kernelArea <= 64 * 9
    }

    /// Benchmark hook: `COLORCAM_CONV_TILED=1` forces the tiled kernel on every conv it can run (all but 1×1
    /// stride-1 unpadded convs and near-depthwise groups), `=0` forces im2col + sgemm; unset chooses by shape.
    static let tiledOverride: Bool? = {
        guard let v = getenv("COLORCAM_CONV_TILED") else { return nil }
        return String(cString: v) == "1"
    }()
}
