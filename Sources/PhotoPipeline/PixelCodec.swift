#if canImport(Glibc)
import Glibc
#endif
import Infer

/// Per-pixel conversions between a frame's 8-bit Y'CbCr codes, CIE L*, and Lab → Y'CbCr, for the compositor's hot
/// loop: sRGB decode/encode through 4096-step tables with linear interpolation, the cube root through `cbrtf`.
///
/// Matches `Infer.Lab` (skimage's constants: sRGB, D65, ε = 0.008856, κ = 7.787) to well under 0.05 L*.
/// Out-of-gamut Lab colours are pulled towards the grey of the same luminance until they fit, so L* is kept.
/// Ownership and threading: immutable after `init`; the tables are owned and freed by this object; any thread.
public final class PixelCodec: @unchecked Sendable {
    // Invariant for @unchecked Sendable: the tables are written only in init.
    public let encoding: YCbCrEncoding
    private let tableSteps = 4096
    /// R' (0…1) → linear, `tableSteps + 2` entries.
    private let toLinear: UnsafeMutablePointer<Float>
    /// linear (0…1) → R' (0…1).
    private let toEncoded: UnsafeMutablePointer<Float>
    // Decoding and encoding constants (codes ↔ 0…1 R'G'B').
    private let yOffset: Float, yScale: Float, cScale: Float
    private let kr: Float, kb: Float, kg: Float
    // Linear sRGB ← XYZ (D65), rows.
    private let m: (Float, Float, Float, Float, Float, Float, Float, Float, Float)
    private static let white: (x: Float, z: Float) = (0.95047, 1.08883)

    public init(encoding: YCbCrEncoding) {
        self.encoding = encoding
        kr = encoding.kr; kb = encoding.kb; kg = 1 - encoding.kr - encoding.kb
        if encoding.fullRange { yOffset = 0; yScale = 255; cScale = 255 } else { yOffset = 16; yScale = 219; cScale = 224 }
        toLinear = .allocate(capacity: tableSteps + 2)
        toEncoded = .allocate(capacity: tableSteps + 2)
        for i in 0...(tableSteps + 1) {
            let v = min(1, Double(i) / Double(tableSteps))
            toLinear[i] = Float(Lab.referenceLinear(v))
            toEncoded[i] = Float(Lab.referenceEncode(v))
        }
        let inv = Lab.xyzToRGB
        m = (Float(inv[0][0]), Float(inv[0][1]), Float(inv[0][2]), Float(inv[1][0]), Float(inv[1][1]),
             Float(inv[1][2]), Float(inv[2][0]), Float(inv[2][1]), Float(inv[2][2]))
    }

    deinit {
        toLinear.deallocate()
        toEncoded.deallocate()
    }

    @inline(__always) private func lookUp(_ table: UnsafeMutablePointer<Float>, _ v: Float) -> Float {
        let p = min(max(v, 0), 1) * Float(tableSteps)
        let i = Int(p)
        let f = p - Float(i)
        return table[i] + (table[i + 1] - table[i]) * f
    }

    /// sRGB R' (0…1) → linear.
    @inline(__always) public func linear(_ v: Float) -> Float { lookUp(toLinear, v) }
    /// linear (0…1) → sRGB R' (0…1).
    @inline(__always) public func encoded(_ v: Float) -> Float { lookUp(toEncoded, v) }

    /// Luminance Y (0…1) → L* (0…100).
    @inline(__always) public static func lightness(luminance t: Float) -> Float {
        t > 0.008856 ? 116 * cubeRoot(t) - 16 : 903.2920 * t
    }

    /// ∛t for t in (0.008, 1.01]: an exponent-bits first guess, then three Newton steps (relative error < 2e-7,
    /// i.e. < 1e-4 in L*; `cbrtf` costs several times more in the compositor's loop).
    @inline(__always) public static func cubeRoot(_ t: Float) -> Float {
        var r = Float(bitPattern: t.bitPattern / 3 + 709_921_077)
        r = (2 * r + t / (r * r)) / 3
        r = (2 * r + t / (r * r)) / 3
        return (2 * r + t / (r * r)) / 3
    }

    /// Codes → R'G'B' in 0…1, clipped (as `YCbCrEncoding.rgb`, on Float codes so interpolated samples work).
    @inline(__always) public func rgb(y: Float, cb: Float, cr: Float) -> SIMD3<Float> {
        let yy = (y - yOffset) / yScale, u = (cb - 128) / cScale, v = (cr - 128) / cScale
        let r = yy + 2 * (1 - kr) * v
        let b = yy + 2 * (1 - kb) * u
        let g = (yy - kr * r - kb * b) / kg
        return simd_clamp01(SIMD3(r, g, b))
    }

    /// The L* a decoder sees for these codes.
    @inline(__always) public func lightness(y: Float, cb: Float, cr: Float) -> Float {
        let c = rgb(y: y, cb: cb, cr: cr)
        let lum = 0.212671 * linear(c.x) + 0.715160 * linear(c.y) + 0.072169 * linear(c.z)
        return Self.lightness(luminance: lum)
    }

    /// Lab → R'G'B' (0…1), gamut-mapped at constant luminance.
    @inline(__always) public func rgb(L: Float, a: Float, b: Float) -> SIMD3<Float> {
        let fy = (L + 16) / 116, fx = fy + a / 500, fz = fy - b / 200
        @inline(__always) func finv(_ f: Float) -> Float { f > 0.2068966 ? f * f * f : (f - 16.0 / 116.0) / 7.787 }
        let x = Self.white.x * finv(fx), lum = min(max(finv(fy), 0), 1), z = Self.white.z * finv(fz)
        var c = SIMD3<Float>(m.0 * x + m.1 * lum + m.2 * z, m.3 * x + m.4 * lum + m.5 * z, m.6 * x + m.7 * lum + m.8 * z)
        let low = c.min(), high = c.max()
        if low < 0 || high > 1 {
            var t: Float = 1
            if low < 0 { t = min(t, lum / (lum - low)) }
            if high > 1 { t = min(t, (1 - lum) / (high - lum)) }
            let grey = SIMD3<Float>(repeating: lum)
            c = simd_clamp01(grey + (c - grey) * max(0, t))
        }
        return SIMD3(encoded(c.x), encoded(c.y), encoded(c.z))
    }

    /// R'G'B' (0…1) → unrounded codes (Y', Cb, Cr).
    @inline(__always) public func codes(_ c: SIMD3<Float>) -> SIMD3<Float> {
        let y = kr * c.x + kg * c.y + kb * c.z
        let u = (c.z - y) / (2 * (1 - kb)), v = (c.x - y) / (2 * (1 - kr))
        return SIMD3(yOffset + yScale * y, 128 + cScale * u, 128 + cScale * v)
    }
}

@inline(__always) func simd_clamp01(_ v: SIMD3<Float>) -> SIMD3<Float> {
    v.replacing(with: 0, where: v .< 0).replacing(with: 1, where: v .> 1)
}
