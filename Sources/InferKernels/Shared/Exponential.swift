import InferKernelSet

/// `e^x` lane by lane for `x` in [−87, 88] (outside it clamped there): `x = n·ln 2 + r` with
/// `|r| ≤ ln 2 / 2`, `e^r` by its degree-6 Taylor polynomial (relative error below 2e-7), `2^n` built in the exponent
/// bits. `n` comes from adding 1.5·2^23, which leaves round-to-nearest `x·log2 e` in the low mantissa bits.
@_transparent
func exponential(_ x: Vector) -> Vector {
    let low = x.replacing(with: Vector(repeating: -87), where: x .< -87)
    let clamped = low.replacing(with: Vector(repeating: 88), where: low .> 88)
    let magic = Vector(repeating: 12_582_912)
    let shifted = multiplyAdd(magic, clamped, Vector(repeating: 1.442_695_04))
    let n = shifted - magic
    var r = multiplyAdd(clamped, n, Vector(repeating: -0.693_145_75))
    r = multiplyAdd(r, n, Vector(repeating: -1.428_606_8e-6))
    var p = Vector(repeating: 1.0 / 720)
    p = multiplyAdd(Vector(repeating: 1.0 / 120), p, r)
    p = multiplyAdd(Vector(repeating: 1.0 / 24), p, r)
    p = multiplyAdd(Vector(repeating: 1.0 / 6), p, r)
    p = multiplyAdd(Vector(repeating: 0.5), p, r)
    p = multiplyAdd(Vector(repeating: 1), p, r)
    p = multiplyAdd(Vector(repeating: 1), p, r)
    let bits = unsafeBitCast(shifted, to: IntVector.self) &- unsafeBitCast(magic, to: IntVector.self)
    let scale = unsafeBitCast((bits &+ 127) &<< 23, to: Vector.self)
    return p * scale
}

extension Kernels {
    public static func sigmoid(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int) {
        let lanes = Vector.scalarCount, one = Vector(repeating: 1)
        var i = 0
        while i + lanes <= count {
            store(one / (one + exponential(-load(x + i))), y + i)
            i += lanes
        }
        while i < count { y[i] = 1 / (1 + scalarExponential(-x[i])); i += 1 }
    }

    public static func softmaxColumns(
        _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, length: Int, inner: Int,
        peak: UnsafeMutablePointer<Float>, sum: UnsafeMutablePointer<Float>
    ) {
        guard length > 0 else { return }
        let lanes = Vector.scalarCount
        if inner == 1 {
            softmaxRow(x, y, count: length)
            return
        }
        // Columns in blocks whose `length` rows stay in L2 across the three passes.
        let blockColumns = max(lanes, (1 << 16) / max(1, length) / lanes * lanes)
        var start = 0
        while start < inner {
            let end = min(inner, start + blockColumns)
            let vectorEnd = start + (end - start) / lanes * lanes
            @inline(__always) func columns(_ vector: (Int) -> Void, _ scalar: (Int) -> Void) {
                var i = start
                while i < vectorEnd { vector(i); i += lanes }
                while i < end { scalar(i); i += 1 }
            }
            columns({ i in store(load(x + i), peak + i) }, { i in peak[i] = x[i] })
            for l in 1..<length {
                let row = x + l * inner
                columns(
                    { i in
                        let p = load(peak + i), v = load(row + i)
                        store(p.replacing(with: v, where: v .> p), peak + i)
                    }, { i in peak[i] = max(peak[i], row[i]) })
            }
            columns({ i in store(Vector(), sum + i) }, { i in sum[i] = 0 })
            for l in 0..<length {
                let row = x + l * inner, out = y + l * inner
                columns(
                    { i in
                        let e = exponential(load(row + i) - load(peak + i))
                        store(e, out + i)
                        store(load(sum + i) + e, sum + i)
                    },
                    { i in
                        let e = scalarExponential(row[i] - peak[i])
                        out[i] = e
                        sum[i] += e
                    })
            }
            let one = Vector(repeating: 1)
            columns({ i in store(one / load(sum + i), sum + i) }, { i in sum[i] = 1 / sum[i] })
            for l in 0..<length {
                let out = y + l * inner
                columns({ i in store(load(out + i) * load(sum + i), out + i) }, { i in out[i] *= sum[i] })
            }
            start = end
        }
    }

    /// Softmax of one contiguous row (a softmax over the last axis: `inner` = 1), vectorised along it.
    static func softmaxRow(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int) {
        let lanes = Vector.scalarCount, whole = count / lanes * lanes
        var peak = x[0]
        var i = 0
        if whole > 0 {
            var v = load(x)
            i = lanes
            while i < whole {
                let next = load(x + i)
                v = v.replacing(with: next, where: next .> v)
                i += lanes
            }
            peak = v.max()
        }
        while i < count { peak = max(peak, x[i]); i += 1 }
        let shift = Vector(repeating: peak)
        var sums = Vector()
        var total: Float = 0
        i = 0
        while i < whole {
            let e = exponential(load(x + i) - shift)
            store(e, y + i)
            sums += e
            i += lanes
        }
        while i < count {
            let e = scalarExponential(x[i] - peak)
            y[i] = e
            total += e
            i += 1
        }
        let scale = 1 / (total + sums.sum())
        i = 0
        while i < whole { store(load(y + i) * Vector(repeating: scale), y + i); i += lanes }
        while i < count { y[i] *= scale; i += 1 }
    }

    public static func tanh(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int) {
        let lanes = Vector.scalarCount
        var i = 0
        while i + lanes <= count {
            store(vectorTanh(load(x + i)), y + i)
            i += lanes
        }
        while i < count { y[i] = vectorTanh(Vector(repeating: x[i]))[0]; i += 1 }
    }
}

/// `tanh x = ±(1 − 2 / (e^(2|x|) + 1))`, |x| clamped to 9 (where tanh is 1 within 3e-8); absolute error below 3e-7.
@_transparent
func vectorTanh(_ x: Vector) -> Vector {
    let one = Vector(repeating: 1)
    let a = x.replacing(with: -x, where: x .< 0)
    let e = exponential(2 * a.replacing(with: Vector(repeating: 9), where: a .> 9))
    let t = one - 2 / (e + one)
    return t.replacing(with: -t, where: x .< 0)
}

/// `exponential` for one value (the columns past the last whole vector), so every column gets the same function.
@inline(__always)
func scalarExponential(_ x: Float) -> Float {
    exponential(Vector(repeating: x))[0]
}
