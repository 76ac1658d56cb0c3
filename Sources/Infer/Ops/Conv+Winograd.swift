import InferKernelSet

#if canImport(Glibc)
    import Glibc
#endif

/// A 3×3, stride-1, ungrouped 2-D conv by Winograd's minimal filtering F(2×2, 3×3) (Lavin & Gray 2016): each 2×2
/// block of outputs is `Aᵀ [ (G w Gᵀ) ⊙ (Bᵀ d B) ] A` over a 4×4 input patch `d`, so the channel sums become 16
/// independent GEMMs `M[ξ] = U[ξ] · V[ξ]` (ξ: the 16 positions of the transformed tile) with 16 multiplies per 4
/// outputs instead of 36 — 2.25× fewer. For wide layers (hundreds of channels) the GEMMs carry nearly all the work
/// and run at sgemm speed, so the layer runs at up to 2.25× sgemm's direct-conv rate. Dilation is kept: a tile's
/// two output rows (columns) are one dilation apart and its four input rows (columns) too.
///
/// F(2×2, 3×3) rather than a larger tile: its transforms are adds and halvings, so it sums almost as exactly as a
/// direct conv (measured on a 512-channel layer: rms relative error 6.0e-7 against 2.7e-7 direct; F(4×4, 3×3),
/// whose transforms carry 1/6 and 1/24, gives 3.7e-6).
///
/// Per block of `tileBlock` tiles: the input transform writes `V[ξ][c][t]`, 16 GEMMs give `M[ξ][o][t]` (on the
/// kernel set's tiled conv tile with AVX-512, else OpenBLAS's sgemm: `usesOwnGemm`), and the output transform writes
/// each tile's 2×2 outputs (clipped at the right and bottom edges); bias and activation run on the output once all
/// blocks are done.
///
/// Layouts: input and output NCHW in the arena; transformed weights `U[ξ][o][c]` (for the tiled GEMM
/// `U[ξ][block][c][tc]`), computed in double precision at load time and owned by the kernel (16/9 of the weights);
/// `V`, `M` and a four-row buffer in arena scratch.
/// Threading: `run` touches only its arena slots and scratch; one thread at a time.
final class ConvWinogradKernel: Kernel {
    /// Scratch budget for one block's `V` and `M` (floats, 16 MiB): each sgemm gets 256 columns on 512-channel
    /// layers, since the packing of `U[ξ]` is repeated per block (ECCV16 on one Intel Xeon core with AVX-512: the
    /// Winograd layers 322 ms with 8 MiB blocks, 301–306 with 16, 303 with 32).
    static let blockFloats = 1 << 22
    /// Fewest input and output channels for which this beats the tiled direct conv (see `isPreferred`).
    static let minChannels = 64

    let g: ConvGeometry
    /// `U[ξ][o][c]` for sgemm, or, with `ownGemm`, `U[ξ][block of tc o][c][tc]` (zero-padded) for the tiled kernel.
    let transformed: UnsafeMutablePointer<Float>
    /// Whether the 16 GEMMs run on the kernel set's tiled conv tile (as 1×1 convs over a row of tiles) instead of
    /// OpenBLAS (`usesOwnGemm`).
    let ownGemm: Bool
    /// Zero bias for the tiled GEMM (one tile of channels) and its single tap offset (0).
    let zeroBias: UnsafeMutablePointer<Float>, zeroTap: UnsafeMutablePointer<Int>
    let bias: UnsafeMutablePointer<Float>?
    let activation: Activation
    let input: Int, output: Int, scratch: Int
    let blas: OpenBLAS
    let kernels: any KernelSet.Type
    /// Tiles per block (`tileBlock(_:)` unless the initializer names it).
    let tileBlock: Int
    /// Floats per row of the input transform's row buffer (`paddedRowLength`).
    let rowLength: Int
    /// Output row (column) of each tile row's (column's) first output; its second is one dilation further.
    let tileRows: [Int], tileColumns: [Int]

    /// Whether the conv's shape allows this method: 2-D, 3×3, stride 1, one group (any pads and dilation).
    static func canRun(_ g: ConvGeometry) -> Bool {
        g.rank == 4 && g.kernelHeight == 3 && g.kernelWidth == 3 && g.strideHeight == 1 && g.strideWidth == 1
            && g.group == 1
    }

    /// Whether a conv that `canRun` this way should (fast mode, chosen at load time): with at least `minChannels`
    /// channels in and out. Measured on one Intel Xeon core with AVX-512 (p50, `tools/profile/results/
    /// isa-dispatch-xeon.txt` and 30-run checks): ECCV16 380–386 ms against 548–557 without it; the default
    /// colorizer 17.1 against 18.6–19.2 (its 96- and 192-channel convs; with its 48-channel convs too, 20.1); the
    /// U-Net (64 channels at most) and the detector CNN (32-channel outputs) unchanged.
    static func isPreferred(_ g: ConvGeometry, override: Bool? = winogradOverride) -> Bool {
        guard canRun(g) else { return false }
        if let override { return override }
        return g.inChannels >= minChannels && g.outChannels >= minChannels
    }

    /// Benchmark and test hook: `COLORCAM_CONV_WINOGRAD=1` runs every conv that `canRun` this way, `=0` none;
    /// unset chooses by shape (`isPreferred`).
    static let winogradOverride: Bool? = {
        guard let v = getenv("COLORCAM_CONV_WINOGRAD") else { return nil }
        return String(cString: v) == "1"
    }()

    /// The output row (or column) of every tile's first output, in order: for dilation `d`, the tiles of residue
    /// `r` start at `r, r + 2d, r + 4d, …` and cover `start` and `start + d`.
    static func tileStarts(size: Int, dilation: Int) -> [Int] {
        var starts: [Int] = []
        for r in 0..<min(dilation, size) {
            var s = r
            while s < size {
                starts.append(s)
                s += 2 * dilation
            }
        }
        return starts
    }

    static func tileCount(_ g: ConvGeometry) -> Int {
        tileStarts(size: g.outHeight, dilation: g.dilationHeight).count
            * tileStarts(size: g.outWidth, dilation: g.dilationWidth).count
    }

    /// Tiles per block: as many as the scratch budget holds for `V` and `M` (at least 32), rounded up to a multiple
    /// of 32, the widest tile of the tiled GEMM's columns: it reads whole tiles, which then stay inside each
    /// channel's row of `tileBlock` floats.
    static func tileBlock(_ g: ConvGeometry) -> Int {
        let perTile = 16 * (g.inChannels + g.outChannels)
        let tiles = min(tileCount(g), max(32, blockFloats / perTile))
        return (tiles + 31) / 32 * 32
    }

    /// Whether the GEMMs run on the kernel set's tiled conv tile rather than OpenBLAS: where the set has an
    /// 8-channel tile (AVX-512), which runs at its own rate whichever OpenBLAS core the environment forces.
    /// Measured on ECCV16, one Intel Xeon core: its Winograd layers 301–306 ms on Cooperlake's sgemm and 306–312 on
    /// the tile; with `OPENBLAS_CORETYPE=Haswell` forced (sgemm peak 84 GFLOP/s against 157) the whole network ran
    /// at 1.11× onnxruntime's time on Haswell's sgemm, 0.78× on the tile.
    static func usesOwnGemm(kernels: any KernelSet.Type) -> Bool { kernels.tiledConvChannels >= 8 }

    /// Floats between two ξ planes of `V` (`M`): one plane plus `planePad`.
    static func planeStride(channels: Int, tileBlock: Int) -> Int { channels * tileBlock + planePad }

    /// Extra floats after each ξ plane (two cache lines), so that the transforms' 16 concurrent streams, a plane
    /// apart, do not all fall into the same cache sets when a plane's size is a power of two (ECCV16's Winograd
    /// layers 447 → 320 ms on one Intel Xeon core, the transforms 170 → 47 ms).
    static let planePad = 32

    /// Arena scratch for blocks of `tileBlock` tiles (nil: the default, `tileBlock(g)`).
    static func scratchFloats(_ g: ConvGeometry, tileBlock: Int? = nil) -> Int {
        let block = tileBlock ?? Self.tileBlock(g)
        return 16
            * (planeStride(channels: g.inChannels, tileBlock: block)
                + planeStride(channels: g.outChannels, tileBlock: block)) + 4 * paddedRowLength(g)
    }

    /// Floats per padded input row in the transform's row buffer: every column a tile reads, from `−padLeft`.
    static func paddedRowLength(_ g: ConvGeometry) -> Int {
        let starts = tileStarts(size: g.outWidth, dilation: g.dilationWidth)
        return (starts.max() ?? 0) + 3 * g.dilationWidth + 1
    }

    init(
        _ g: ConvGeometry, weights: [Float], bias: [Float]?, activation: FusedActivation, input: Int, output: Int,
        scratch: Int, blas: OpenBLAS, kernels: any KernelSet.Type, tileBlock: Int? = nil
    ) {
        self.g = g
        self.activation = activation.form
        self.input = input; self.output = output; self.scratch = scratch
        self.blas = blas; self.kernels = kernels
        self.bias = bias.map(ownedCopy)
        precondition(tileBlock.map { $0 > 0 && $0 % 32 == 0 } ?? true, "tileBlock must be a positive multiple of 32")
        self.tileBlock = tileBlock ?? Self.tileBlock(g)
        tileRows = Self.tileStarts(size: g.outHeight, dilation: g.dilationHeight)
        tileColumns = Self.tileStarts(size: g.outWidth, dilation: g.dilationWidth)
        rowLength = Self.paddedRowLength(g)
        let cout = g.outChannels, cin = g.inChannels
        ownGemm = Self.usesOwnGemm(kernels: kernels)
        let tc = kernels.tiledConvChannels, blocks = (cout + tc - 1) / tc
        let count = ownGemm ? 16 * blocks * tc * cin : 16 * cout * cin
        transformed = UnsafeMutablePointer<Float>.allocate(capacity: count)
        transformed.initialize(repeating: 0, count: count)
        zeroBias = UnsafeMutablePointer<Float>.allocate(capacity: tc)
        zeroBias.initialize(repeating: 0, count: tc)
        zeroTap = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        zeroTap.initialize(to: 0)
        @inline(__always) func index(_ xi: Int, _ o: Int, _ c: Int) -> Int {
            ownGemm ? ((xi * blocks + o / tc) * cin + c) * tc + o % tc : (xi * cout + o) * cin + c
        }
        // U = G w Gᵀ with G = [[1, 0, 0], [½, ½, ½], [½, −½, ½], [0, 0, 1]]: (G w)'s rows, then G across each.
        weights.withUnsafeBufferPointer { w in
            for o in 0..<cout {
                for c in 0..<cin {
                    let k = w.baseAddress! + (o * cin + c) * 9
                    for i in 0..<4 {
                        // Row i of G w: G's row i applied down each of w's three columns.
                        var r = SIMD3<Double>()
                        for j in 0..<3 {
                            let (w0, w1, w2) = (Double(k[j]), Double(k[3 + j]), Double(k[6 + j]))
                            switch i {
                            case 0: r[j] = w0
                            case 1: r[j] = (w0 + w1 + w2) / 2
                            case 2: r[j] = (w0 - w1 + w2) / 2
                            default: r[j] = w2
                            }
                        }
                        let row = SIMD4(r[0], (r[0] + r[1] + r[2]) / 2, (r[0] - r[1] + r[2]) / 2, r[2])
                        for j in 0..<4 { transformed[index(i * 4 + j, o, c)] = Float(row[j]) }
                    }
                }
            }
        }
    }

    deinit {
        transformed.deallocate()
        bias?.deallocate()
        zeroBias.deallocate()
        zeroTap.deallocate()
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let cin = g.inChannels, cout = g.outChannels
        let inPlane = g.inHeight * g.inWidth, outPlane = g.outHeight * g.outWidth
        let tiles = tileRows.count * tileColumns.count
        let vPlane = Self.planeStride(channels: cin, tileBlock: tileBlock)
        let mPlane = Self.planeStride(channels: cout, tileBlock: tileBlock)
        let v = arena + scratch
        let m = v + 16 * vPlane
        let rowBuffer = m + 16 * mPlane
        for n in 0..<g.batch {
            let x = UnsafePointer(arena + input + n * cin * inPlane)
            let y = arena + output + n * cout * outPlane
            var first = 0
            while first < tiles {
                let count = min(tileBlock, tiles - first)
                transformInput(x, v: v, rowBuffer: rowBuffer, first: first, count: count)
                for xi in 0..<16 {
                    if ownGemm {
                        multiplyTiled(xi, v: v + xi * vPlane, m: m + xi * mPlane, count: count)
                    } else {
                        blas.sgemm(
                            transA: false, transB: false, m: cout, n: count, k: cin, alpha: 1,
                            a: transformed + xi * cout * cin, lda: cin, b: v + xi * vPlane, ldb: tileBlock,
                            beta: 0, c: m + xi * mPlane, ldc: tileBlock)
                    }
                }
                transformOutput(m, y: y, first: first, count: count)
                first += count
            }
            kernels.biasActivate(
                y, rows: cout, rowLength: outPlane, rowStride: outPlane, bias: bias.map { UnsafePointer($0) },
                activation: activation)
        }
    }

    /// `M[ξ] = U[ξ] · V[ξ]` for `count` tiles on the kernel set's tile: a 1×1 conv of `cin` channels over one row of
    /// `count` columns (channel stride `tileBlock`), a block of `tc` output channels at a time.
    func multiplyTiled(_ xi: Int, v: UnsafeMutablePointer<Float>, m: UnsafeMutablePointer<Float>, count: Int) {
        let cin = g.inChannels, cout = g.outChannels, tc = kernels.tiledConvChannels
        let blocks = (cout + tc - 1) / tc
        for b in 0..<blocks {
            kernels.tiledConvRow(
                TiledConvRow(
                    source: v, channelStride: tileBlock, rowStride: 0, columns: count,
                    weights: transformed + (xi * blocks + b) * cin * tc, bias: zeroBias,
                    channels: min(tc, cout - b * tc), inputChannels: cin, kernelHeight: 1, kernelWidth: 1,
                    dilationHeight: 1, tapOffsets: zeroTap, output: m + b * tc * tileBlock, outputPlane: tileBlock,
                    activation: .identity))
        }
    }

    /// `V[ξ][c][t] = (Bᵀ d B)[ξ]` for tiles `first ..< first + count` (row-major over `tileRows × tileColumns`),
    /// with Bᵀ = [[1, 0, −1, 0], [0, 1, 1, 0], [0, −1, 1, 0], [0, 1, 0, −1]].
    func transformInput(
        _ x: UnsafePointer<Float>, v: UnsafeMutablePointer<Float>, rowBuffer: UnsafeMutablePointer<Float>,
        first: Int, count: Int
    ) {
        let cin = g.inChannels, inPlane = g.inHeight * g.inWidth, inW = g.inWidth
        let dh = g.dilationHeight, dw = g.dilationWidth, padL = g.padLeft
        let plane = Self.planeStride(channels: cin, tileBlock: tileBlock)
        let columnsPerRow = tileColumns.count
        for c in 0..<cin {
            let xc = x + c * inPlane
            let vc = v + c * tileBlock
            var t = first
            while t < first + count {
                let tr = t / columnsPerRow
                let firstColumn = t % columnsPerRow
                let lastColumn = min(columnsPerRow, firstColumn + (first + count - t))
                // The tile row's four input rows, zero-padded, in the row buffer (column q is input column q − padL).
                for u in 0..<4 {
                    let dst = rowBuffer + u * rowLength
                    let iy = tileRows[tr] - g.padTop + u * dh
                    guard iy >= 0 && iy < g.inHeight else {
                        dst.update(repeating: 0, count: rowLength)
                        continue
                    }
                    let src = xc + iy * inW
                    let lead = min(padL, rowLength)
                    dst.update(repeating: 0, count: lead)
                    let copied = max(0, min(inW, rowLength - lead))
                    (dst + lead).update(from: src, count: copied)
                    (dst + lead + copied).update(repeating: 0, count: rowLength - lead - copied)
                }
                let r0 = rowBuffer, r1 = rowBuffer + rowLength, r2 = r1 + rowLength, r3 = r2 + rowLength
                for tc in firstColumn..<lastColumn {
                    let q = tileColumns[tc]
                    let slot = t - first + (tc - firstColumn)
                    // Bᵀ d: the patch's four rows combined (each a vector of its four columns).
                    let d0 = SIMD4(r0[q], r0[q + dw], r0[q + 2 * dw], r0[q + 3 * dw])
                    let d1 = SIMD4(r1[q], r1[q + dw], r1[q + 2 * dw], r1[q + 3 * dw])
                    let d2 = SIMD4(r2[q], r2[q + dw], r2[q + 2 * dw], r2[q + 3 * dw])
                    let d3 = SIMD4(r3[q], r3[q + dw], r3[q + 2 * dw], r3[q + 3 * dw])
                    // (Bᵀ d) B: the same combination across each row's four columns.
                    @inline(__always) func store(_ i: Int, _ r: SIMD4<Float>) {
                        let base = vc + (i * 4) * plane + slot
                        base[0] = r[0] - r[2]
                        base[plane] = r[1] + r[2]
                        base[2 * plane] = r[2] - r[1]
                        base[3 * plane] = r[1] - r[3]
                    }
                    store(0, d0 - d2)
                    store(1, d1 + d2)
                    store(2, d2 - d1)
                    store(3, d1 - d3)
                }
                t += lastColumn - firstColumn
            }
        }
    }

    /// Each tile's outputs `Aᵀ M A` (Aᵀ = [[1, 1, 1, 0], [0, 1, −1, −1]]) written to `y`, dropping those past the
    /// bottom or right edge.
    func transformOutput(_ m: UnsafeMutablePointer<Float>, y: UnsafeMutablePointer<Float>, first: Int, count: Int) {
        let cout = g.outChannels, outW = g.outWidth, outH = g.outHeight, outPlane = outH * outW
        let dh = g.dilationHeight, dw = g.dilationWidth
        let plane = Self.planeStride(channels: cout, tileBlock: tileBlock)
        let columnsPerRow = tileColumns.count
        for o in 0..<cout {
            let mo = m + o * tileBlock
            let yo = y + o * outPlane
            for slot in 0..<count {
                let t = first + slot
                let oy = tileRows[t / columnsPerRow], ox = tileColumns[t % columnsPerRow]
                @inline(__always) func row(_ i: Int) -> SIMD4<Float> {
                    let p = mo + (i * 4) * plane + slot
                    return SIMD4(p[0], p[plane], p[2 * plane], p[3 * plane])
                }
                let m0 = row(0), m1 = row(1), m2 = row(2), m3 = row(3)
                let s0 = m0 + m1 + m2, s1 = m1 - m2 - m3
                let top = yo + oy * outW + ox
                top[0] = s0[0] + s0[1] + s0[2]
                let right = ox + dw < outW
                if right { top[dw] = s0[1] - s0[2] - s0[3] }
                if oy + dh < outH {
                    let bottom = top + dh * outW
                    bottom[0] = s1[0] + s1[1] + s1[2]
                    if right { bottom[dw] = s1[1] - s1[2] - s1[3] }
                }
            }
        }
    }
}
