import InferKernelSet

extension Kernels {
    /// The tiled direct conv's inner loop: a tile of `tileChannels` (4; 8 with AVX-512) output channels × 2 vectors
    /// of output columns stays in registers over every input channel and tap; one broadcast weight per output
    /// channel and two loads per tap feed 2 multiply-adds per channel. Bias is the accumulators' initial value; the
    /// activation is applied before the single store.
    public static func tiledConvRow(_ a: TiledConvRow) {
        #if COLORCAM_ISA_AVX512
            if a.narrow {
                narrowTiledConvRow(a)
                return
            }
        #endif
        let lanes = Vector.scalarCount, tileColumns = 2 * lanes, tc = tileChannels
        let cg = a.inputChannels, kh = a.kernelHeight, kw = a.kernelWidth
        let rowStride = a.rowStride, channelStride = a.channelStride
        let taps = a.tapOffsets
        let t0 = taps[0], t1 = kw > 1 ? taps[1] : 0, t2 = kw > 2 ? taps[2] : 0
        let b = a.bias, outPlane = a.outputPlane
        let slope = Vector(repeating: a.activation.slope)
        let low = Vector(repeating: a.activation.low), high = Vector(repeating: a.activation.high)
        var ox = 0
        while ox < a.columns {
            var a00 = Vector(repeating: b[0]), a10 = Vector(repeating: b[1])
            var a20 = Vector(repeating: b[2]), a30 = Vector(repeating: b[3])
            var a01 = a00, a11 = a10, a21 = a20, a31 = a30
            #if COLORCAM_ISA_AVX512
                var a40 = Vector(repeating: b[4]), a50 = Vector(repeating: b[5])
                var a60 = Vector(repeating: b[6]), a70 = Vector(repeating: b[7])
                var a41 = a40, a51 = a50, a61 = a60, a71 = a70
            #endif
            @inline(__always) func tap(_ s: UnsafePointer<Float>, _ w: UnsafePointer<Float>) {
                let s0 = load(s), s1 = load(s + lanes)
                let w0 = Vector(repeating: w[0]), w1 = Vector(repeating: w[1])
                let w2 = Vector(repeating: w[2]), w3 = Vector(repeating: w[3])
                a00 = multiplyAdd(a00, s0, w0); a01 = multiplyAdd(a01, s1, w0)
                a10 = multiplyAdd(a10, s0, w1); a11 = multiplyAdd(a11, s1, w1)
                a20 = multiplyAdd(a20, s0, w2); a21 = multiplyAdd(a21, s1, w2)
                a30 = multiplyAdd(a30, s0, w3); a31 = multiplyAdd(a31, s1, w3)
                #if COLORCAM_ISA_AVX512
                    let w4 = Vector(repeating: w[4]), w5 = Vector(repeating: w[5])
                    let w6 = Vector(repeating: w[6]), w7 = Vector(repeating: w[7])
                    a40 = multiplyAdd(a40, s0, w4); a41 = multiplyAdd(a41, s1, w4)
                    a50 = multiplyAdd(a50, s0, w5); a51 = multiplyAdd(a51, s1, w5)
                    a60 = multiplyAdd(a60, s0, w6); a61 = multiplyAdd(a61, s1, w6)
                    a70 = multiplyAdd(a70, s0, w7); a71 = multiplyAdd(a71, s1, w7)
                #endif
            }
            var w = a.weights
            if kh == 3 && kw == 3 {  // the common case: all nine taps of a channel unrolled
                let r1 = a.dilationHeight * rowStride, r2 = 2 * a.dilationHeight * rowStride
                for c in 0..<cg {
                    let row = a.source + c * channelStride + ox
                    tap(row + t0, w); tap(row + t1, w + tc); tap(row + t2, w + 2 * tc)
                    tap(row + r1 + t0, w + 3 * tc); tap(row + r1 + t1, w + 4 * tc); tap(row + r1 + t2, w + 5 * tc)
                    tap(row + r2 + t0, w + 6 * tc); tap(row + r2 + t1, w + 7 * tc); tap(row + r2 + t2, w + 8 * tc)
                    w += 9 * tc
                }
            } else if kh == 1 && kw == 1 {  // a GEMM (the Winograd conv's): one tap per channel, two at a time
                let row = a.source + ox + t0
                var c = 0
                while c + 1 < cg {
                    tap(row + c * channelStride, w)
                    tap(row + (c + 1) * channelStride, w + tc)
                    w += 2 * tc
                    c += 2
                }
                if c < cg { tap(row + c * channelStride, w) }
            } else {
                for c in 0..<cg {
                    for ky in 0..<kh {
                        let row = a.source + c * channelStride + ky * a.dilationHeight * rowStride + ox
                        if kw == 3 {
                            tap(row + t0, w); tap(row + t1, w + tc); tap(row + t2, w + 2 * tc)
                            w += 3 * tc
                        } else {
                            for kx in 0..<kw {
                                tap(row + taps[kx], w)
                                w += tc
                            }
                        }
                    }
                }
            }
            let valid = min(tileColumns, a.columns - ox)
            let d = a.output + ox
            @inline(__always) func put(_ channel: Int, _ lo: Vector, _ hi: Vector) {
                if channel < a.channels {
                    storeTile(
                        activate(lo, slope, low, high), activate(hi, slope, low, high), to: d + channel * outPlane,
                        valid: valid)
                }
            }
            put(0, a00, a01); put(1, a10, a11); put(2, a20, a21); put(3, a30, a31)
            #if COLORCAM_ISA_AVX512
                put(4, a40, a41); put(5, a50, a51); put(6, a60, a61); put(7, a70, a71)
            #endif
            ox += tileColumns
        }
    }

    /// Stores the first `valid` (≤ 2 vectors) lanes of `lo ++ hi` at `d`.
    @inline(__always)
    static func storeTile(_ lo: Vector, _ hi: Vector, to d: UnsafeMutablePointer<Float>, valid: Int) {
        let lanes = Vector.scalarCount
        if valid == 2 * lanes {
            store(lo, d)
            store(hi, d + lanes)
            return
        }
        for i in 0..<min(valid, lanes) { d[i] = lo[i] }
        if valid > lanes { for i in lanes..<valid { d[i] = hi[i - lanes] } }
    }

    #if COLORCAM_ISA_AVX512
        /// The narrow tile: 8 output channels × one vector (16 columns), for rows that would leave much of a
        /// 32-column tile on padding (16- and 40-column rows). One load and 8 broadcasts per tap feed 8 FMAs.
        static func narrowTiledConvRow(_ a: TiledConvRow) {
            let lanes = Vector.scalarCount, tc = tileChannels
            let cg = a.inputChannels, kh = a.kernelHeight, kw = a.kernelWidth
            let rowStride = a.rowStride, channelStride = a.channelStride
            let taps = a.tapOffsets
            let b = a.bias, outPlane = a.outputPlane
            let slope = Vector(repeating: a.activation.slope)
            let low = Vector(repeating: a.activation.low), high = Vector(repeating: a.activation.high)
            var ox = 0
            while ox < a.columns {
                var a0 = Vector(repeating: b[0]), a1 = Vector(repeating: b[1])
                var a2 = Vector(repeating: b[2]), a3 = Vector(repeating: b[3])
                var a4 = Vector(repeating: b[4]), a5 = Vector(repeating: b[5])
                var a6 = Vector(repeating: b[6]), a7 = Vector(repeating: b[7])
                var w = a.weights
                for c in 0..<cg {
                    for ky in 0..<kh {
                        let row = a.source + c * channelStride + ky * a.dilationHeight * rowStride + ox
                        for kx in 0..<kw {
                            let s = load(row + taps[kx])
                            a0 = multiplyAdd(a0, s, Vector(repeating: w[0]))
                            a1 = multiplyAdd(a1, s, Vector(repeating: w[1]))
                            a2 = multiplyAdd(a2, s, Vector(repeating: w[2]))
                            a3 = multiplyAdd(a3, s, Vector(repeating: w[3]))
                            a4 = multiplyAdd(a4, s, Vector(repeating: w[4]))
                            a5 = multiplyAdd(a5, s, Vector(repeating: w[5]))
                            a6 = multiplyAdd(a6, s, Vector(repeating: w[6]))
                            a7 = multiplyAdd(a7, s, Vector(repeating: w[7]))
                            w += tc
                        }
                    }
                }
                let valid = min(lanes, a.columns - ox)
                let d = a.output + ox
                @inline(__always) func put(_ channel: Int, _ v: Vector) {
                    guard channel < a.channels else { return }
                    let out = activate(v, slope, low, high), p = d + channel * outPlane
                    if valid == lanes {
                        store(out, p)
                    } else {
                        for i in 0..<valid { p[i] = out[i] }
                    }
                }
                put(0, a0); put(1, a1); put(2, a2); put(3, a3); put(4, a4); put(5, a5); put(6, a6); put(7, a7)
                ox += lanes
            }
        }
    #endif
}
