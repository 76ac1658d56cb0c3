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

    /// sRGB codes → linear light (the two-piece sRGB curve).
    @inline(__always)
    static func linearize(_ c: V) -> V {
        let curve = LabSIMD.pow((pointwiseMax(c, V(repeating: 0.04045)) + 0.055) * (1 / 1.055), 2.4)
        return curve.replacing(with: c * (1 / 12.92), where: c .<= 0.04045)
    }

    /// Linear light → sRGB codes, clipped to 0…1.
    @inline(__always)
    static func encode(_ v: V) -> V {
        let curve = LabSIMD.pow(pointwiseMax(v, V(repeating: 0.0031308)), 1 / 2.4) * 1.055 - 0.055
        let out = curve.replacing(with: v * 12.92, where: v .<= 0.0031308)
        return out.clamped(lowerBound: V(repeating: 0), upperBound: V(repeating: 1))
    }

    /// Lab's f(t): ∛t above 0.008856, 7.787 t + 16/116 below.
    @inline(__always)
    static func labF(_ t: V) -> V {
        let root = LabSIMD.cbrt(pointwiseMax(t, V(repeating: 0.008856)))
        return root.replacing(with: t * 7.787 + (16.0 / 116.0), where: t .<= 0.008856)
    }

    /// Inverse of f: f³ above 0.2068966, (f − 16/116) / 7.787 below.
    @inline(__always)
    static func labFInverse(_ f: V) -> V {
        (f * f * f).replacing(with: (f - 16.0 / 116.0) * (1 / 7.787), where: f .<= 0.2068966)
    }

    /// Linear RGB (eight pixels) → L, a, b.
    @inline(__always)
    static func labFromLinear(_ r: V, _ g: V, _ b: V, _ m: UnsafePointer<Float>) -> (V, V, V) {
        let x = r * m[0] + g * m[1] + b * m[2]
        let y = r * m[3] + g * m[4] + b * m[5]
        let z = r * m[6] + g * m[7] + b * m[8]
        let fx = labF(x), fy = labF(y), fz = labF(z)
        return (fy * 116 - 16, (fx - fy) * 500, (fy - fz) * 200)
    }

    /// L, a, b (eight pixels) → sRGB codes 0…1.
    @inline(__always)
    static func rgbFromLab(_ l: V, _ a: V, _ b: V, _ m: UnsafePointer<Float>) -> (V, V, V) {
        let fy = (l + 16) * (1 / 116)
        let fx = fy + a * (1 / 500)
        let fz = pointwiseMax(fy - b * (1 / 200), V(repeating: 0))
        let x = labFInverse(fx), y = labFInverse(fy), z = labFInverse(fz)
        let r = x * m[0] + y * m[1] + z * m[2]
        let g = x * m[3] + y * m[4] + z * m[5]
        let bb = x * m[6] + y * m[7] + z * m[8]
        return (encode(r), encode(g), encode(bb))
    }

    /// Converts `pixelCount` interleaved sRGB pixels (floats 0…1) to interleaved Lab.
    public static func convertRGBToLab(_ rgb: UnsafePointer<Float>, _ lab: UnsafeMutablePointer<Float>, pixelCount: Int) {
        forward.withUnsafeBufferPointer { mb in
            let m = mb.baseAddress!
            var p = 0
            var r = V(), g = V(), b = V()
            while p < pixelCount {
                let n = min(8, pixelCount - p)
                let src = rgb + 3 * p
                for k in 0..<8 {
                    let q = k < n ? k : 0
                    r[k] = src[3 * q]; g[k] = src[3 * q + 1]; b[k] = src[3 * q + 2]
                }
                let (l, a, bb) = labFromLinear(linearize(r), linearize(g), linearize(b), m)
                let dst = lab + 3 * p
                for k in 0..<n { dst[3 * k] = l[k]; dst[3 * k + 1] = a[k]; dst[3 * k + 2] = bb[k] }
                p += 8
            }
        }
    }

    /// Converts `pixelCount` interleaved Lab pixels to interleaved sRGB floats, clipped to 0…1.
    public static func convertLabToRGB(_ lab: UnsafePointer<Float>, _ rgb: UnsafeMutablePointer<Float>, pixelCount: Int) {
        inverse.withUnsafeBufferPointer { mb in
            let m = mb.baseAddress!
            var p = 0
            var l = V(), a = V(), b = V()
            while p < pixelCount {
                let n = min(8, pixelCount - p)
                let src = lab + 3 * p
                for k in 0..<8 {
                    let q = k < n ? k : 0
                    l[k] = src[3 * q]; a[k] = src[3 * q + 1]; b[k] = src[3 * q + 2]
                }
                let (r, g, bb) = rgbFromLab(l, a, b, m)
                let dst = rgb + 3 * p
                for k in 0..<n { dst[3 * k] = r[k]; dst[3 * k + 1] = g[k]; dst[3 * k + 2] = bb[k] }
                p += 8
            }
        }
    }
}
