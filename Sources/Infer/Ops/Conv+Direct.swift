import InferKernelSet

/// Direct convolution for convs with very few output channels per group (depthwise), where sgemm would spend its
/// time packing a large im2col matrix for one to four rows.
///
/// Accumulates each output row of all the group's channels in place: for every input channel and kernel tap, each
/// output row gets `w · input row` added over the contiguous span of valid columns, so the input is read straight
/// from cache and nothing is materialised. Bias and activation are applied per row as the epilogue.
final class ConvDirectKernel: Kernel {
    let g: ConvGeometry
    let weights: UnsafeMutablePointer<Float>
    let bias: UnsafeMutablePointer<Float>?
    let activation: Activation
    let input: Int, output: Int
    let kernels: any KernelSet.Type
    /// Weights regrouped for the SIMD path: blocks of 4 output channels, `[block][c][ky][kx][4]`, zero-padded.
    let blocked: UnsafeMutablePointer<Float>

    /// Use the direct kernel when a group has at most this many output channels (depthwise and near-depthwise).
    /// Measured on the U-Net's thin layers (CPU time, EPYC, OpenBLAS Zen core): sgemm already wins from 8 channels
    /// (8.6 vs 8.0 GFLOP/s at 8, 15.7 vs 7.5 at 16), so the threshold is low.
    static let maxChannelsPerGroup = 4

    init(
        _ g: ConvGeometry, weights: [Float], bias: [Float]?, activation: FusedActivation, input: Int, output: Int,
        kernels: any KernelSet.Type
    ) {
        self.g = g
        self.weights = ownedCopy(weights)
        self.bias = bias.map(ownedCopy)
        self.activation = activation.form
        self.kernels = kernels
        self.input = input; self.output = output
        let m = g.outChannelsPerGroup, taps = g.inChannelsPerGroup * g.kernelArea
        let blocks = (m + 3) / 4
        blocked = UnsafeMutablePointer<Float>.allocate(capacity: g.group * blocks * taps * 4)
        blocked.initialize(repeating: 0, count: g.group * blocks * taps * 4)
        for grp in 0..<g.group {
            for o in 0..<m {
                for t in 0..<taps {
                    blocked[((grp * blocks + o / 4) * taps + t) * 4 + o % 4] = weights[(grp * m + o) * taps + t]
                }
            }
        }
    }

    deinit {
        blocked.deallocate()
        weights.deallocate()
        bias?.deallocate()
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        if g.strideWidth == 1 { runBlocked(arena) } else { runRows(arena) }
    }

    /// Stride-1 path: 4 output channels × one vector of columns accumulate in registers over every tap
    /// (`KernelSet.directConvRow`); border columns (where some taps fall in the padding) take a scalar loop.
    func runBlocked(_ arena: UnsafeMutablePointer<Float>) {
        let m = g.outChannelsPerGroup, cg = g.inChannelsPerGroup
        let kh = g.kernelHeight, kw = g.kernelWidth, dw = g.dilationWidth
        let inW = g.inWidth, inH = g.inHeight, outW = g.outWidth, outH = g.outHeight
        let inPlane = inH * inW, outPlane = outH * outW
        let taps = cg * kh * kw, blocks = (m + 3) / 4
        // Columns whose every tap is inside the row: ox - padLeft >= 0 and ox - padLeft + (kw-1)*dw < inW.
        let interiorLo = min(outW, g.padLeft)
        let interiorEnd = max(interiorLo, min(outW, inW - (kw - 1) * dw + g.padLeft))
        for n in 0..<g.batch {
            for grp in 0..<g.group {
                let x = arena + input + (n * g.inChannels + grp * cg) * inPlane
                let y = arena + output + (n * g.outChannels + grp * m) * outPlane
                for oy in 0..<outH {
                    for b in 0..<blocks {
                        let wb = blocked + (grp * blocks + b) * taps * 4
                        let o0 = b * 4, count = min(4, m - o0)
                        var bias4 = SIMD4<Float>(repeating: 0)
                        if let bias { for j in 0..<count { bias4[j] = bias[grp * m + o0 + j] } }
                        let ox = withUnsafeBytes(of: &bias4) { b in
                            kernels.directConvRow(
                                DirectConvRow(
                                    input: x, inputWidth: inW, inputHeight: inH, inputChannels: cg, kernelHeight: kh,
                                    kernelWidth: kw, dilationHeight: g.dilationHeight, dilationWidth: dw,
                                    firstInputRow: oy * g.strideHeight - g.padTop, padLeft: g.padLeft,
                                    weights: wb, bias: b.baseAddress!.assumingMemoryBound(to: Float.self),
                                    channels: count, output: y + o0 * outPlane + oy * outW, outputPlane: outPlane,
                                    first: interiorLo, end: interiorEnd, activation: activation))
                        }
                        for col in 0..<outW where col < interiorLo || col >= ox {
                            for j in 0..<count {
                                var sum = bias4[j]
                                for c in 0..<cg {
                                    for ky in 0..<kh {
                                        let iy = oy * g.strideHeight - g.padTop + ky * g.dilationHeight
                                        if iy < 0 || iy >= inH { continue }
                                        let row = x + c * inPlane + iy * inW
                                        for kx in 0..<kw {
                                            let ix = col - g.padLeft + kx * dw
                                            if ix < 0 || ix >= inW { continue }
                                            sum += wb[((c * kh + ky) * kw + kx) * 4 + j] * row[ix]
                                        }
                                    }
                                }
                                y[(o0 + j) * outPlane + oy * outW + col] = activation.apply(sum)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Any-stride path: row-wise accumulation.
    func runRows(_ arena: UnsafeMutablePointer<Float>) {
        let m = g.outChannelsPerGroup, cg = g.inChannelsPerGroup
        let kh = g.kernelHeight, kw = g.kernelWidth
        let inW = g.inWidth, inH = g.inHeight, outW = g.outWidth, outH = g.outHeight
        let inPlane = inH * inW, outPlane = outH * outW
        let sw = g.strideWidth
        for n in 0..<g.batch {
            for grp in 0..<g.group {
                let x = arena + input + (n * g.inChannels + grp * cg) * inPlane
                let y = arena + output + (n * g.outChannels + grp * m) * outPlane
                let wg = weights + grp * m * cg * kh * kw
                for oy in 0..<outH {
                    for o in 0..<m {
                        (y + o * outPlane + oy * outW).update(repeating: bias?[grp * m + o] ?? 0, count: outW)
                    }
                    for c in 0..<cg {
                        for ky in 0..<kh {
                            let iy = oy * g.strideHeight - g.padTop + ky * g.dilationHeight
                            if iy < 0 || iy >= inH { continue }
                            let row = x + c * inPlane + iy * inW
                            for kx in 0..<kw {
                                let offX = kx * g.dilationWidth - g.padLeft
                                let lo = offX >= 0 ? 0 : (-offX + sw - 1) / sw
                                let hi = inW - 1 - offX < 0 ? -1 : min(outW - 1, (inW - 1 - offX) / sw)
                                if hi < lo { continue }
                                let span = hi - lo + 1
                                let src = row + lo * sw + offX
                                for o in 0..<m {
                                    let w = wg[((o * cg + c) * kh + ky) * kw + kx]
                                    let dst = y + o * outPlane + oy * outW + lo
                                    if sw == 1 {
                                        for i in 0..<span { dst[i] += w * src[i] }
                                    } else {
                                        for i in 0..<span { dst[i] += w * src[i * sw] }
                                    }
                                }
                            }
                        }
                    }
                    kernels.biasActivate(
                        y + oy * outW, rows: m, rowLength: outW, rowStride: outPlane, bias: nil, activation: activation)
                }
            }
        }
    }
}
