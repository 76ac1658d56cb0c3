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
