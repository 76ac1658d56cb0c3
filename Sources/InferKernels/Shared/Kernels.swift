import InferKernelSet

/// This instruction set's kernels (see `KernelSet` for each one's contract). Stateless; any thread.
public enum Kernels: KernelSet {
    public static var name: String { isaName }
    public static var vectorFloats: Int { Vector.scalarCount }
    public static var tiledConvColumns: Int { 2 * Vector.scalarCount }
    public static var tiledConvChannels: Int { tileChannels }
    public static var tiledConvNarrowColumns: Int { hasNarrowTile ? Vector.scalarCount : 0 }

    public static func biasActivate(
        _ p: UnsafeMutablePointer<Float>, rows: Int, rowLength: Int, rowStride: Int, bias: UnsafePointer<Float>?,
        activation: Activation
    ) {
        if bias == nil && activation.isIdentity { return }
        let lanes = Vector.scalarCount
        let slope = Vector(repeating: activation.slope)
        let low = Vector(repeating: activation.low), high = Vector(repeating: activation.high)
        for r in 0..<rows {
            let row = p + r * rowStride
            let b = bias?[r] ?? 0
            let bv = Vector(repeating: b)
            var i = 0
            while i + lanes <= rowLength {
                store(activate(load(row + i) + bv, slope, low, high), row + i)
                i += lanes
            }
            while i < rowLength {
                row[i] = activation.apply(row[i] + b)
                i += 1
            }
        }
    }

    public static func blendRows(
        _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, weight: Float, into dst: UnsafeMutablePointer<Float>,
        count: Int
    ) {
        let lanes = Vector.scalarCount, w = Vector(repeating: weight)
        var i = 0
        while i + lanes <= count {
            let x = load(a + i)
            store(multiplyAdd(x, load(b + i) - x, w), dst + i)
            i += lanes
        }
        while i < count {
            dst[i] = a[i] + (b[i] - a[i]) * weight
            i += 1
        }
    }

    public static func deinterleave(
        _ src: UnsafePointer<Float>, even: UnsafeMutablePointer<Float>, odd: UnsafeMutablePointer<Float>, count: Int
    ) {
        let lanes = PoolInput.scalarCount / 2
        var i = 0
        while i + lanes <= count {
            let v = UnsafeRawPointer(src + 2 * i).loadUnaligned(as: PoolInput.self)
            let e = v.evenHalf, o = v.oddHalf
            UnsafeMutableRawPointer(even + i).storeBytes(of: e, as: type(of: e))
            UnsafeMutableRawPointer(odd + i).storeBytes(of: o, as: type(of: o))
            i += lanes
        }
        while i < count {
            even[i] = src[2 * i]
            odd[i] = src[2 * i + 1]
            i += 1
        }
    }

    public static func maxPool2x2Row(
        _ r0: UnsafePointer<Float>, _ r1: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>, count: Int
    ) {
        let lanes = PoolInput.scalarCount / 2
        var i = 0
        while i + lanes <= count {
            let a = UnsafeRawPointer(r0 + 2 * i).loadUnaligned(as: PoolInput.self)
            let b = UnsafeRawPointer(r1 + 2 * i).loadUnaligned(as: PoolInput.self)
            let m = a.replacing(with: b, where: b .> a)
            let even = m.evenHalf, odd = m.oddHalf
            let larger = even.replacing(with: odd, where: odd .> even)
            UnsafeMutableRawPointer(dst + i).storeBytes(of: larger, as: type(of: larger))
            i += lanes
        }
        while i < count {
            dst[i] = max(max(r0[2 * i], r0[2 * i + 1]), max(r1[2 * i], r1[2 * i + 1]))
            i += 1
        }
    }
}
