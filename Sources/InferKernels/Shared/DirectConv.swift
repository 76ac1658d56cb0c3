import InferKernelSet

extension Kernels {
    /// The stride-1 direct (depthwise) conv's interior: 4 output channels × one vector of columns accumulate in
    /// registers over every input channel and tap; rows whose taps fall in the vertical padding are skipped.
    public static func directConvRow(_ a: DirectConvRow) -> Int {
        let lanes = Vector.scalarCount
        let kh = a.kernelHeight, kw = a.kernelWidth, dw = a.dilationWidth
        let inW = a.inputWidth, inPlane = a.inputHeight * inW, outPlane = a.outputPlane
        let slope = Vector(repeating: a.activation.slope)
        let low = Vector(repeating: a.activation.low), high = Vector(repeating: a.activation.high)
        var ox = a.first
        while ox + lanes <= a.end {
            var a0 = Vector(repeating: a.bias[0]), a1 = Vector(repeating: a.bias[1])
            var a2 = Vector(repeating: a.bias[2]), a3 = Vector(repeating: a.bias[3])
            for c in 0..<a.inputChannels {
                for ky in 0..<kh {
                    let iy = a.firstInputRow + ky * a.dilationHeight
                    if iy < 0 || iy >= a.inputHeight { continue }
                    let row = a.input + c * inPlane + iy * inW + ox - a.padLeft
                    var w = a.weights + ((c * kh + ky) * kw) * 4
                    for kx in 0..<kw {
                        let s = load(row + kx * dw)
                        a0 = multiplyAdd(a0, s, Vector(repeating: w[0]))
                        a1 = multiplyAdd(a1, s, Vector(repeating: w[1]))
                        a2 = multiplyAdd(a2, s, Vector(repeating: w[2]))
                        a3 = multiplyAdd(a3, s, Vector(repeating: w[3]))
                        w += 4
                    }
                }
            }
            let dst = a.output + ox
            store(activate(a0, slope, low, high), dst)
            if a.channels > 1 { store(activate(a1, slope, low, high), dst + outPlane) }
            if a.channels > 2 { store(activate(a2, slope, low, high), dst + 2 * outPlane) }
            if a.channels > 3 { store(activate(a3, slope, low, high), dst + 3 * outPlane) }
            ox += lanes
        }
        return ox
    }
}
