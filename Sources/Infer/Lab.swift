#if canImport(Glibc)
    import Glibc
#endif

/// CIE L*a*b* for sRGB (D65), with the constants of scikit-image's `rgb2lab` / `lab2rgb` (what Zhang et al.'s
/// colorizers are trained with, and what `tools/train/labcolor.py` uses).
///
///     linear = c > 0.04045 ? ((c + 0.055) / 1.055)^2.4 : c / 12.92                (c = sRGB code / 255)
///     XYZ    = M · linear, then divided by the D65 white (0.95047, 1, 1.08883)
///     f(t)   = t > 0.008856 ? ∛t : 7.787 t + 16/116
///     L = 116 f(Y) − 16,  a = 500 (f(X) − f(Y)),  b = 200 (f(Y) − f(Z))
///
/// L is in 0…100; a and b roughly −86…98 and −108…94 for sRGB colours. The inverse clips RGB to 0…1, as
/// scikit-image does. Units: all buffers are interleaved per pixel (R G B / L a b), rows packed.
///
/// Paths: `Lab.reference…` (scalar Double, the definition the tests hold the fast paths to); eight-lane
/// `SIMD8<Float>` conversions, public for per-pixel callers (`Lab+Lanes.swift`, curves in `Lab+SIMD.swift`); float
/// buffers (`Lab+FloatForward.swift` sRGB → Lab, `Lab+Float.swift` Lab → sRGB and the chunked planar helpers);
/// 8-bit buffers and the L-only path for a model's input (`Lab+UInt8.swift`); interpolation tables
/// (`Lab+Tables.swift`); camera YCbCr (`Lab+YCbCr.swift`). All are pure functions of their inputs: thread-safe, no
/// heap allocation.
public enum Lab {
    /// sRGB (linear) → XYZ, rows X, Y, Z (scikit-image's `xyz_from_rgb`).
    public static let rgbToXYZ: [[Double]] = [
        [0.412453, 0.357580, 0.180423],
        [0.212671, 0.715160, 0.072169],
        [0.019334, 0.119193, 0.950227]
    ]
    /// D65 reference white (2° observer), as scikit-image uses.
    public static let whiteD65: (x: Double, y: Double, z: Double) = (0.95047, 1.0, 1.08883)

    /// The inverse of `rgbToXYZ` (computed once, in Double).
    public static let xyzToRGB: [[Double]] = invert3x3(rgbToXYZ)

    static let epsilon = 0.008856
    static let kappa = 7.787

    /// sRGB code (0…1) → linear light.
    @inlinable
    public static func referenceLinear(_ c: Double) -> Double {
        c > 0.04045 ? pow((c + 0.055) / 1.055, 2.4) : c / 12.92
    }

    /// Linear light → sRGB code (0…1, not clipped).
    @inlinable
    public static func referenceEncode(_ v: Double) -> Double {
        v > 0.0031308 ? 1.055 * pow(v, 1 / 2.4) - 0.055 : 12.92 * v
    }

    /// One sRGB colour (components 0…1) → (L, a, b), in Double: the definition.
    public static func referenceLab(r: Double, g: Double, b: Double) -> (L: Double, a: Double, b: Double) {
        let lr = referenceLinear(r), lg = referenceLinear(g), lb = referenceLinear(b)
        let m = rgbToXYZ
        let x = (m[0][0] * lr + m[0][1] * lg + m[0][2] * lb) / whiteD65.x
        let y = (m[1][0] * lr + m[1][1] * lg + m[1][2] * lb) / whiteD65.y
        let z = (m[2][0] * lr + m[2][1] * lg + m[2][2] * lb) / whiteD65.z
        func f(_ t: Double) -> Double { t > epsilon ? cbrt(t) : kappa * t + 16.0 / 116.0 }
        let fx = f(x), fy = f(y), fz = f(z)
        return (116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz))
    }

    /// One Lab colour → sRGB (components clipped to 0…1), in Double: the definition.
    public static func referenceRGB(L: Double, a: Double, b: Double) -> (r: Double, g: Double, b: Double) {
        let fy = (L + 16) / 116
        let fx = fy + a / 500
        let fz = max(fy - b / 200, 0)
        func finv(_ f: Double) -> Double { f > 0.2068966 ? f * f * f : (f - 16.0 / 116.0) / kappa }
        let x = finv(fx) * whiteD65.x, y = finv(fy) * whiteD65.y, z = finv(fz) * whiteD65.z
        let m = xyzToRGB
        func enc(_ v: Double) -> Double { min(max(referenceEncode(max(v, 0)), 0), 1) }
        return (
            enc(m[0][0] * x + m[0][1] * y + m[0][2] * z),
            enc(m[1][0] * x + m[1][1] * y + m[1][2] * z),
            enc(m[2][0] * x + m[2][1] * y + m[2][2] * z)
        )
    }

    static func invert3x3(_ m: [[Double]]) -> [[Double]] {
        let a = m[0][0], b = m[0][1], c = m[0][2]
        let d = m[1][0], e = m[1][1], f = m[1][2]
        let g = m[2][0], h = m[2][1], i = m[2][2]
        let det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
        return [
            [(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det],
            [(f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det],
            [(d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det]
        ]
    }
}
