import InferKernelSet

#if canImport(Glibc)
    import Glibc
#endif

/// Direct convolution in register tiles, for 2-D (and 1-D) convs with a few to a few dozen channels, where im2col +
/// sgemm spends its time writing and re-reading a 9×-larger im2col matrix and sgemm runs at small M and K.
///
/// Per group, output rows are computed in bands. For a band, the input rows it needs (all the group's channels) are
/// copied once into arena scratch, zero-padded left/right/top/bottom and, for a horizontal stride `s`, split into
/// `s` phase rows (`phase[p][q] = padded[q·s + p]`), so that every kernel tap of every output column is a
/// contiguous, in-bounds load. The inner kernel (`KernelSet.tiledConvRow`, per instruction set) keeps a tile of 4 (8
/// with AVX-512) output channels × 2 vectors of output columns (16 columns with AVX2, 32 with AVX-512, 8 on the
/// baseline) in registers over all input channels and taps. Columns past the row end are computed on padding and not
/// stored.
///
/// Layouts: input and output NCHW in the arena; packed weights `[group][block of tc oc][c][ky][kx][tc]` (tc: the
/// set's `tiledConvChannels`, zero-padded), owned by the kernel; band scratch `[c][row][phase][phaseLength]` in the
/// arena's scratch region.
/// Threading: `run` touches only its arena slots and scratch; one thread at a time.
final class ConvTiledKernel: Kernel {
    /// Target band scratch size in floats (128 KiB): the band is written once and read by every tap and channel
    /// block from L2.
    static let bandFloats = 1 << 15

    let g: ConvGeometry
    let packed: UnsafeMutablePointer<Float>
    /// Bias per output channel, zero-padded to whole tiles (zeros when the conv has no bias).
    let bias: UnsafeMutablePointer<Float>
    let activation: Activation
    let kernels: any KernelSet.Type
    /// Whether rows are computed in the set's narrow (one-vector) tiles (`usesNarrowTile`).
    let narrow: Bool
    let input: Int, output: Int, scratch: Int
    let blocks: Int
    /// The band layout (`Layout`), chosen at load time.
    let layout: Layout
    /// Floats per phase row (`Layout.phaseLength`).
    var phaseLength: Int { layout.phaseLength }
    /// Output rows per band.
    var bandOutputRows: Int { layout.bandOutputRows }
    /// Per kx: offset of the tap inside a padded input row group (`phase · phaseLength + offset / stride`).
    let tapOffsets: UnsafeMutablePointer<Int>

    /// Geometry-derived sizes, shared by the planner (scratch size) and the kernel.
    ///
    /// Row layout: each padded input row is a phase row of `phaseLength` floats (per horizontal stride phase).
    /// `flat` (stride 1 both ways, rows that fill the tiles poorly): a phase row is just the padded input row
    /// (`outWidth` plus the widest tap), and a band's output rows are computed as one flattened run of
    /// `(rows − 1) · phaseLength + outWidth` columns — column `ox` of row `r` is run position `r · phaseLength + ox`,
    /// the positions between rows are computed on padding and dropped — into a staging area, then copied out.
    struct Layout {
        /// Floats per phase row: output tiles rounded up plus the widest tap offset (`flat`: the padded row).
        var phaseLength: Int, bandOutputRows: Int
        var flat: Bool
        /// Floats after each channel's band rows that a flattened run's last tile may read (`flat` only).
        var slack: Int

        /// `tileColumns`: the kernel set's `tiledConvColumns` (or its narrow tile's).
        init(_ g: ConvGeometry, tileColumns: Int, flat: Bool) {
            let widestTap = ((g.kernelWidth - 1) * g.dilationWidth) / g.strideWidth
            self.flat = flat
            if flat {
                phaseLength = g.outWidth + widestTap
                slack = tileColumns
            } else {
                let tiles = (g.outWidth + tileColumns - 1) / tileColumns
                phaseLength = tiles * tileColumns + widestTap + 1
                slack = 0
            }
            let rowFloats = g.inChannelsPerGroup * g.strideWidth * phaseLength
            bandOutputRows = min(g.outHeight, max(1, ConvTiledKernel.bandFloats / max(1, rowFloats * g.strideHeight)))
        }

        /// Padded input rows a band of `outputRows` output rows reads.
        func bandRows(_ g: ConvGeometry, outputRows: Int) -> Int {
            (outputRows - 1) * g.strideHeight + (g.kernelHeight - 1) * g.dilationHeight + 1
        }

        /// Floats between two channels' rows in a band of `rows` padded input rows.
        func channelStride(_ g: ConvGeometry, rows: Int) -> Int { rows * g.strideWidth * phaseLength + slack }

        /// Floats per output channel of the staging area a flattened band is computed into (0 unless `flat`).
        var stagingPlane: Int { flat ? bandOutputRows * phaseLength : 0 }

        /// Where the staging area starts in the scratch: after the largest band.
        func stagingOffset(_ g: ConvGeometry) -> Int {
            g.inChannelsPerGroup * channelStride(g, rows: bandRows(g, outputRows: bandOutputRows))
        }

        func scratchFloats(_ g: ConvGeometry, tileChannels: Int) -> Int {
            stagingOffset(g) + tileChannels * stagingPlane
        }
    }

    init(
        _ g: ConvGeometry, weights: [Float], bias: [Float]?, activation: FusedActivation, input: Int, output: Int,
        scratch: Int, kernels: any KernelSet.Type
    ) {
        self.g = g
        self.activation = activation.form
        self.kernels = kernels
        self.input = input; self.output = output; self.scratch = scratch
        let m = g.outChannelsPerGroup, taps = g.inChannelsPerGroup * g.kernelArea, tc = kernels.tiledConvChannels
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
        narrow = Self.usesNarrowTile(g, kernels: kernels)
        layout = Self.layout(g, kernels: kernels)
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
        let channelStride = layout.channelStride(g, rows: rows)
        for c in 0..<g.inChannelsPerGroup {
            for r in 0..<rows {
                let iy = firstRow + r - g.padTop
                let dst = band + c * channelStride + r * sw * phaseLength
                if r == rows - 1 && layout.slack > 0 {
                    (dst + sw * phaseLength).update(repeating: 0, count: layout.slack)
                }
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
                    // Stride 2: the columns whose both phases lie inside the row are split by the kernel set;
                    // the padding on either side, and other strides, element by element.
                    var bulk = 0..<0
                    if sw == 2 {
                        let first = (padL + 1) / 2, last = min(phaseLength - 1, (inW - 2 + padL) / 2)
                        if last >= first {
                            bulk = first..<(last + 1)
                            kernels.deinterleave(
                                src + 2 * first - padL, even: dst + first, odd: dst + phaseLength + first,
                                count: bulk.count)
                        }
                    }
                    for p in 0..<sw {
                        let row = dst + p * phaseLength
                        @inline(__always) func byElement(_ columns: Range<Int>) {
                            for q in columns {
                                let ix = q * sw + p - padL
                                row[q] = ix >= 0 && ix < inW ? src[ix] : 0
                            }
                        }
                        byElement(0..<bulk.lowerBound)
                        byElement(bulk.upperBound..<phaseLength)
                    }
                }
            }
        }
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let cg = g.inChannelsPerGroup, m = g.outChannelsPerGroup
        let inPlane = g.inHeight * g.inWidth, outPlane = g.outHeight * g.outWidth
        let band = arena + scratch
        let taps = cg * g.kernelArea, tc = kernels.tiledConvChannels
        let rowStride = g.strideWidth * phaseLength
        for n in 0..<g.batch {
            for grp in 0..<g.group {
                let x = arena + input + (n * g.inChannels + grp * cg) * inPlane
                let y = arena + output + (n * g.outChannels + grp * m) * outPlane
                var oy0 = 0
                while oy0 < g.outHeight {
                    let count = min(bandOutputRows, g.outHeight - oy0)
                    let rows = layout.bandRows(g, outputRows: count)
                    fillBand(x, band: band, firstRow: oy0 * g.strideHeight, rows: rows)
                    @inline(__always) func row(
                        _ b: Int, source: UnsafePointer<Float>, columns: Int, output: UnsafeMutablePointer<Float>,
                        plane: Int
                    ) {
                        let block = grp * blocks + b
                        kernels.tiledConvRow(
                            TiledConvRow(
                                source: source, channelStride: layout.channelStride(g, rows: rows),
                                rowStride: rowStride, columns: columns, weights: packed + block * taps * tc,
                                bias: bias + block * tc, channels: min(tc, m - b * tc), inputChannels: cg,
                                kernelHeight: g.kernelHeight, kernelWidth: g.kernelWidth,
                                dilationHeight: g.dilationHeight, tapOffsets: tapOffsets, output: output,
                                outputPlane: plane, activation: activation, narrow: narrow))
                    }
                    if layout.flat {
                        let staging = band + layout.stagingOffset(g)
                        for b in 0..<blocks {
                            row(
                                b, source: band, columns: (count - 1) * phaseLength + g.outWidth, output: staging,
                                plane: layout.stagingPlane)
                            for j in 0..<min(tc, m - b * tc) {
                                for r in 0..<count {
                                    (y + (b * tc + j) * outPlane + (oy0 + r) * g.outWidth).update(
                                        from: staging + j * layout.stagingPlane + r * phaseLength, count: g.outWidth)
                                }
                            }
                        }
                    } else {
                        for oy in oy0..<(oy0 + count) {
                            for b in 0..<blocks {
                                row(
                                    b, source: band + (oy - oy0) * g.strideHeight * rowStride, columns: g.outWidth,
                                    output: y + b * tc * outPlane + oy * g.outWidth, plane: outPlane)
                            }
                        }
                    }
                    oy0 += count
                }
            }
        }
    }
}

extension ConvTiledKernel {
    /// Whether the tiled direct kernel should run this conv instead of im2col + sgemm (chosen at load time).
    ///
    /// Measured on this project's models (CPU time, AMD EPYC, 1 thread; `tools/profile/results/isa-dispatch.txt`):
    /// with AVX2's 4-channel tile the kernel wins while a group has few channels (K = cg·kh·kw ≤ 64·9, M ≤ 64; with
    /// AVX2, K ≤ 128·9 at M ≤ 32: `tools/profile/results/tiled-conv-avx2-k-2026-12-07.txt`), where
    /// sgemm runs at 20–45 GFLOP/s; sgemm wins on wide layers (ECCV16: 109 GFLOP/s against the tile's 98). AVX-512's
    /// 8-channel × 32-column tile beats sgemm with either OpenBLAS core on every ECCV16 layer (3×3 convs 208–218
    /// GFLOP/s against Cooperlake's 193 and Haswell's 114) whenever the output rows fill its tiles (≥ 75 %); on
    /// narrower rows it wins at M ≤ 64 up to K = 128·9 (the detector's 80→32 conv on 40-column rows: 139 against 97),
    /// and loses at 128 channels on 16-column rows (108 against Cooperlake's 144).
    static func isPreferred(
        _ g: ConvGeometry, kernels: any KernelSet.Type, override: Bool? = tiledOverride
    ) -> Bool {
        if let override { return override }
        let m = g.outChannelsPerGroup, k = g.inChannelsPerGroup * g.kernelArea
        guard kernels.tiledConvChannels >= 8 else {
            // AVX2's 8-float vectors: at ≤ 32 channels the tile keeps winning up to K = 128·9 (the detector's 80→32
            // conv on 40-column rows: 0.85–0.93 ms against sgemm's 1.18–1.68); at 64 channels it loses past 64·9.
            // Baseline's 4-float tile loses there (3.0–3.6 ms against 1.3–1.4).
            if kernels.vectorFloats >= 8 && m <= 32 && k <= 128 * 9 { return true }
            return m <= 64 && k <= 64 * 9
        }
        if filled(g.outWidth, tileColumns(g, kernels: kernels)) >= 0.75 { return true }
        return m <= 64 && k <= 128 * 9
    }

    /// The fraction of `columns`-wide tiles a row of `width` outputs fills.
    static func filled(_ width: Int, _ columns: Int) -> Double {
        Double(width) / Double(((width + columns - 1) / columns) * columns)
    }

    /// Whether the set's narrow tile should compute this conv's rows: where the full tile would run at most two
    /// thirds filled (16-column rows with AVX-512's 16/32-column tiles: 100 % against 50 %). Measured: the narrow
    /// tile runs at about 70 % of the full one's rate on well-filled rows (the detector's 80-column rows: 137 against
    /// 172 GFLOP/s; 40-column rows: 127 against 140), and on 16-column rows at 155 against 115.
    static func usesNarrowTile(_ g: ConvGeometry, kernels: any KernelSet.Type) -> Bool {
        let narrow = kernels.tiledConvNarrowColumns
        return narrow > 0 && filled(g.outWidth, narrow) >= 1.5 * filled(g.outWidth, kernels.tiledConvColumns)
    }

    /// The band layout this conv runs with on `kernels`.
    static func layout(_ g: ConvGeometry, kernels: any KernelSet.Type) -> Layout {
        Layout(g, tileColumns: tileColumns(g, kernels: kernels), flat: usesFlatRows(g, kernels: kernels))
    }

    /// Whether the band's output rows run as one flattened run (`Layout.flat`): stride 1 both ways, where the
    /// padded rows waste fewer columns than the tiles would leave empty at each row's end (by more than 5 points of
    /// fill). Measured on the detector CNN at 160×120 (rows of 160, 80, 40 and 20 columns; AMD EPYC Zen 4, AVX-512,
    /// 1 thread): 4.86 → 4.00 ms, its 40- and 20-column rows going from 62 % of a 32-column tile to 95 / 91 %.
    static func usesFlatRows(_ g: ConvGeometry, kernels: any KernelSet.Type) -> Bool {
        guard g.strideWidth == 1 && g.strideHeight == 1 else { return false }
        let widestTap = (g.kernelWidth - 1) * g.dilationWidth
        let flatFill = Double(g.outWidth) / Double(g.outWidth + widestTap)
        return flatFill > filled(g.outWidth, tileColumns(g, kernels: kernels)) + 0.05
    }

    /// Output columns per tile for this conv (the band layout is padded to it).
    static func tileColumns(_ g: ConvGeometry, kernels: any KernelSet.Type) -> Int {
        usesNarrowTile(g, kernels: kernels) ? kernels.tiledConvNarrowColumns : kernels.tiledConvColumns
    }

    /// Benchmark hook: `COLORCAM_CONV_TILED=1` forces the tiled kernel on every conv it can run (all but 1×1
    /// stride-1 unpadded convs and near-depthwise groups), `=0` forces im2col + sgemm; unset chooses by shape.
    static let tiledOverride: Bool? = {
        guard let v = getenv("COLORCAM_CONV_TILED") else { return nil }
        return String(cString: v) == "1"
    }()
}
