#if canImport(Glibc)
import Glibc
#endif

/// The float path: interleaved sRGB (0…1) ⇄ interleaved Lab, eight pixels per step with `SIMD8<Float>`.
///
/// Matches `Lab.referenceLab` / `referenceRGB` within ΔE 0.01 (LabTests, and `Tests/integration/test_lab.py`
/// against scikit-image). Pure functions: any thread, no allocation; `pixelCount` pixels are read and written.
extension Lab {
    typealias V = SIMD8<Float>

    // Row-major matrices with the white point folded in (XYZ/white = W⁻¹ M · rgb).
    @usableFromInline static let forward: [Float] = (0..<9).map { k in
        let w = [whiteD65.x, whiteD65.y, whiteD65.z][k / 3]
        return Float(rgbToXYZ[k / 3][k % 3] / w)
    }
    @usableFromInline static let inverse: [Float] = (0..<9).map { k in
        let w = [whiteD65.x, whiteD65.y, whiteD65.z][k % 3]
        return Float(xyzToRGB[k / 3][k % 3] * w)
    }

    /// The sRGB curve sampled at 4096 + 2 points over 0…1 (Double-exact), for `linearizeTable`.
    static let linearCurve: [Float] = (0...4097).map { Float(referenceLinear(min(Double($0) / 4096, 1.0 + 1.0 / 4096))) }

    /// sRGB codes → linear light by linear interpolation in `linearCurve` (error below 3e-8, the curve's
    /// curvature is at most 3.4); blocks with a code outside 0…1 take the exact formula (`linearize`).
    @inline(__always)
    static func linearizeTable(_ c: V, _ table: UnsafePointer<Float>) -> V {
        if any(c .< 0) || any(c .> 1) { return linearize(c) }
        let scaled = c * 4096
        let shifted = scaled + 12_582_912.0 - 0.5          // round-to-nearest of (x − ½) = floor(x) for x ≥ 0
        let index = unsafeBitCast(shifted, to: SIMD8<UInt32>.self) &- 0x4B40_0000
        let base = shifted - 12_582_912.0
        let frac = scaled - base
        var lo = V(), hi = V()
        for k in 0..<8 {
            let i = Int(index[k])
            lo[k] = table[i]
            hi[k] = table[i + 1]
        }
        return lo + (hi - lo) * frac
    }

    /// sRGB codes → linear light (the two-piece sRGB curve).
    @inline(__always)
    static func linearize(_ c: V) -> V {
        let curve = LabSIMD.pow((c.replacing(with: 0.04045, where: c .< 0.04045) + 0.055) * (1 / 1.055), 2.4)
        return curve.replacing(with: c * (1 / 12.92), where: c .<= 0.04045)
    }

    /// Linear light → sRGB codes, clipped to 0…1.
    @inline(__always)
    static func encode(_ v: V) -> V {
        let curve = LabSIMD.pow(v.replacing(with: 0.0031308, where: v .< 0.0031308), 1 / 2.4) * 1.055 - 0.055
        let out = curve.replacing(with: v * 12.92, where: v .<= 0.0031308)
        return out.replacing(with: 0, where: out .< 0).replacing(with: 1, where: out .> 1)
    }

    /// Lab's f(t): ∛t above 0.008856, 7.787 t + 16/116 below.
    @inline(__always)
    static func labF(_ t: V) -> V {
        let root = LabSIMD.cbrt(t.replacing(with: 0.008856, where: t .< 0.008856))
        return root.replacing(with: t * 7.787 + (16.0 / 116.0), where: t .<= 0.008856)
    }

    /// f(t) sampled at 8192 + 2 points over 0…1 (Double-exact), for `labFTable`.
    static let labFCurve: [Float] = (0...8193).map { i in
        let t = min(Double(i) / 8192, 1.0 + 1.0 / 8192)
        return Float(t > 0.008856 ? cbrt(t) : 7.787 * t + 16.0 / 116.0)
    }

    /// f(t) by linear interpolation in `labFCurve` (error below 2e-6, giving ΔE below 2e-3); blocks with some t
    /// outside 0…1 take the exact `labF`.
    @inline(__always)
    static func labFTable(_ t: V, _ table: UnsafePointer<Float>) -> V {
        if any(t .< 0) || any(t .> 1) { return labF(t) }
        let scaled = t * 8192
        let shifted = scaled + 12_582_912.0 - 0.5
        let index = unsafeBitCast(shifted, to: SIMD8<UInt32>.self) &- 0x4B40_0000
        let frac = scaled - (shifted - 12_582_912.0)
        var lo = V(), hi = V()
        for k in 0..<8 {
            let i = Int(index[k])
            lo[k] = table[i]
            hi[k] = table[i + 1]
        }
        return lo + (hi - lo) * frac
    }

    /// Inverse of f: f³ above 0.2068966, (f − 16/116) / 7.787 below.
    @inline(__always)
    static func labFInverse(_ f: V) -> V {
        (f * f * f).replacing(with: (f - 16.0 / 116.0) * (1 / 7.787), where: f .<= 0.2068966)
    }

    /// Linear RGB (eight pixels) → L, a, b; f from `fTable` (`labFCurve`) when given, else exact.
    @inline(__always)
    static func labFromLinear(_ r: V, _ g: V, _ b: V, _ m: UnsafePointer<Float>,
                              _ fTable: UnsafePointer<Float>? = nil) -> (V, V, V) {
        let x = r * m[0] + g * m[1] + b * m[2]
        let y = r * m[3] + g * m[4] + b * m[5]
        let z = r * m[6] + g * m[7] + b * m[8]
        let fx: V, fy: V, fz: V
        if let fTable {
            fx = labFTable(x, fTable); fy = labFTable(y, fTable); fz = labFTable(z, fTable)
        } else {
            fx = labF(x); fy = labF(y); fz = labF(z)
        }
        return (fy * 116 - 16, (fx - fy) * 500, (fy - fz) * 200)
    }

    /// L, a, b (eight pixels) → sRGB codes 0…1.
    @inline(__always)
    static func rgbFromLab(_ l: V, _ a: V, _ b: V, _ m: UnsafePointer<Float>) -> (V, V, V) {
        let fy = (l + 16) * (1 / 116)
        let fx = fy + a * (1 / 500)
        let fzRaw = fy - b * (1 / 200)
        let fz = fzRaw.replacing(with: 0, where: fzRaw .< 0)
        let x = labFInverse(fx), y = labFInverse(fy), z = labFInverse(fz)
        let r = x * m[0] + y * m[1] + z * m[2]
        let g = x * m[3] + y * m[4] + z * m[5]
        let bb = x * m[6] + y * m[7] + z * m[8]
        return (encode(r), encode(g), encode(bb))
    }

    /// Loads 8 interleaved triples (24 floats) as three planes.
    @inline(__always)
    static func load8(_ p: UnsafePointer<Float>) -> (V, V, V) {
        (V(p[0], p[3], p[6], p[9], p[12], p[15], p[18], p[21]),
         V(p[1], p[4], p[7], p[10], p[13], p[16], p[19], p[22]),
         V(p[2], p[5], p[8], p[11], p[14], p[17], p[20], p[23]))
    }

    /// Stores three planes as 8 interleaved triples.
    @inline(__always)
    static func store8(_ x: V, _ y: V, _ z: V, _ p: UnsafeMutablePointer<Float>) {
        for k in 0..<8 { p[3 * k] = x[k]; p[3 * k + 1] = y[k]; p[3 * k + 2] = z[k] }
    }

    /// Runs `body` over `pixelCount` interleaved triples, 8 at a time; the last partial block goes through a
    /// 24-float stack buffer (no heap allocation).
    @inline(__always)
    static func blocks(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>, pixelCount: Int,
                       _ body: (V, V, V) -> (V, V, V)) {
        let full = pixelCount / 8
        for blk in 0..<full {
            let (x, y, z) = load8(src + 24 * blk)
            let (u, v, w) = body(x, y, z)
            store8(u, v, w, dst + 24 * blk)
        }
        let rest = pixelCount - 8 * full
        if rest > 0 {
            withUnsafeTemporaryAllocation(of: Float.self, capacity: 48) { tmp in
                let t = tmp.baseAddress!
                t.initialize(repeating: 0.5, count: 48)
                for i in 0..<(3 * rest) { t[i] = src[24 * full + i] }
                let (x, y, z) = load8(t)
                let (u, v, w) = body(x, y, z)
                store8(u, v, w, t + 24)
                for i in 0..<(3 * rest) { dst[24 * full + i] = t[24 + i] }
            }
        }
    }

    /// Converts `pixelCount` interleaved sRGB pixels (floats 0…1) to interleaved Lab.
    public static func convertRGBToLab(_ rgb: UnsafePointer<Float>, _ lab: UnsafeMutablePointer<Float>, pixelCount: Int) {
        forward.withUnsafeBufferPointer { mb in
            linearCurve.withUnsafeBufferPointer { tb in
                labFCurve.withUnsafeBufferPointer { fb in
                    let m = mb.baseAddress!, t = tb.baseAddress!, f = fb.baseAddress!
                    blocks(rgb, lab, pixelCount: pixelCount) { r, g, b in
                        labFromLinear(linearizeTable(r, t), linearizeTable(g, t), linearizeTable(b, t), m, f)
                    }
                }
            }
        }
    }

    /// Converts `pixelCount` interleaved Lab pixels to interleaved sRGB floats, clipped to 0…1.
    public static func convertLabToRGB(_ lab: UnsafePointer<Float>, _ rgb: UnsafeMutablePointer<Float>, pixelCount: Int) {
        inverse.withUnsafeBufferPointer { mb in
            let m = mb.baseAddress!
            blocks(lab, rgb, pixelCount: pixelCount) { l, a, b in rgbFromLab(l, a, b, m) }
        }
    }
}
