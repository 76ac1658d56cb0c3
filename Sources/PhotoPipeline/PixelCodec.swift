import Foundation
import Infer

#if canImport(Glibc)
    import Glibc
#endif

/// Per-pixel conversions between a frame's 8-bit Y'CbCr codes, CIE L*, and Lab → Y'CbCr, for the compositor's hot
/// loop: sRGB decode/encode through 4096-step tables with linear interpolation, the cube root through `cbrtf`.
///
/// Matches `Infer.Lab` (skimage's constants: sRGB, D65, ε = 0.008856, κ = 7.787) to well under 0.05 L*.
/// Out-of-gamut Lab colours are pulled towards the grey of the same luminance until they fit, so L* is kept.
/// Ownership and threading: immutable after `init`; the tables are owned and freed by this object; any thread.
public final class PixelCodec: @unchecked Sendable {
    // Invariant for @unchecked Sendable: the tables are written only in init.
    public let encoding: YCbCrEncoding
    private static let tableSteps = 4096
    /// R' (0…1) → linear, `Self.tableSteps + 2` entries.
    private let toLinear: UnsafeMutablePointer<Float>
    /// Luminance (0…1) → L* (0…100), `Self.tableSteps + 2` entries (interpolation error < 1e-3 L*).
    private let toLightness: UnsafeMutablePointer<Float>
    /// d(linear)/d(R') at R' (0…1).
    private let slope: UnsafeMutablePointer<Float>
    /// linear (0…1) → R' (0…1).
    private let toEncoded: UnsafeMutablePointer<Float>
    // Decoding and encoding constants (codes ↔ 0…1 R'G'B').
    private let yOffset: Float, yScale: Float, cScale: Float, yStep: Float, cStep: Float
    private let kr: Float, kb: Float, kg: Float, kgInverse: Float
    // Linear sRGB ← XYZ (D65), rows.
    private let m: (Float, Float, Float, Float, Float, Float, Float, Float, Float)
    private static let white: (x: Float, z: Float) = (0.95047, 1.08883)

    public init(encoding: YCbCrEncoding) {
        self.encoding = encoding
        kr = encoding.kr; kb = encoding.kb; kg = 1 - encoding.kr - encoding.kb
        if encoding.fullRange {
            yOffset = 0; yScale = 255; cScale = 255
        } else {
            yOffset = 16; yScale = 219; cScale = 224
        }
        yStep = 1 / yScale; cStep = 1 / cScale; kgInverse = 1 / kg
        toLinear = .allocate(capacity: Self.tableSteps + 2)
        toEncoded = .allocate(capacity: Self.tableSteps + 2)
        toLightness = .allocate(capacity: Self.tableSteps + 2)
        slope = .allocate(capacity: Self.tableSteps + 2)
        for i in 0...(Self.tableSteps + 1) {
            let v = min(1, Double(i) / Double(Self.tableSteps))
            toLinear[i] = Float(Lab.referenceLinear(v))
            toEncoded[i] = Float(Lab.referenceEncode(v))
            toLightness[i] = v > 0.008856 ? Float(116 * cbrt(v) - 16) : Float(903.2920 * v)
            slope[i] = v <= 0.04045 ? Float(1 / 12.92) : Float(2.4 / 1.055 * pow((v + 0.055) / 1.055, 1.4))
        }
        let inv = Lab.xyzToRGB
        m = (
            Float(inv[0][0]), Float(inv[0][1]), Float(inv[0][2]), Float(inv[1][0]), Float(inv[1][1]),
            Float(inv[1][2]), Float(inv[2][0]), Float(inv[2][1]), Float(inv[2][2])
        )
    }

    deinit {
        toLinear.deallocate()
        toEncoded.deallocate()
        toLightness.deallocate()
        slope.deallocate()
    }

    @inline(__always) private func lookUp(_ table: UnsafeMutablePointer<Float>, _ v: Float) -> Float {
        let p = min(max(v, 0), 1) * Float(Self.tableSteps)
        let i = Int(p)
        let f = p - Float(i)
        return table[i] + (table[i + 1] - table[i]) * f
    }

    /// `lookUp` on four values: lane by lane (Swift's generic SIMD conversions and clamps cost far more here).
    @inline(__always) private func lookUp4(_ table: UnsafeMutablePointer<Float>, _ v: SIMD4<Float>) -> SIMD4<Float> {
        SIMD4(lookUp(table, v[0]), lookUp(table, v[1]), lookUp(table, v[2]), lookUp(table, v[3]))
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
        let yy = (y - yOffset) * yStep, u = (cb - 128) * cStep, v = (cr - 128) * cStep
        let r = yy + 2 * (1 - kr) * v
        let b = yy + 2 * (1 - kb) * u
        let g = yy - (kr * (r - yy) + kb * (b - yy)) * kgInverse
        return SIMD3(min(max(r, 0), 1), min(max(g, 0), 1), min(max(b, 0), 1))
    }

    /// The L* a decoder sees for these codes.
    @inline(__always) public func lightness(y: Float, cb: Float, cr: Float) -> Float {
        lightness(luminance: luminance(y: y, cb: cb, cr: cr))
    }

    /// What a chroma pair adds to R', G', B' (each channel is Y' + its term): computed once per chroma block by
    /// the compositor and shared by the block's pixels.
    public struct ChromaTerms {
        public let dr: Float, dg: Float, db: Float
    }

    @inline(__always) public func chroma(cb: Float, cr: Float) -> ChromaTerms {
        let u = (cb - 128) * cStep, v = (cr - 128) * cStep
        let dr = 2 * (1 - kr) * v, db = 2 * (1 - kb) * u
        return ChromaTerms(dr: dr, dg: -(kr * dr + kb * db) * kgInverse, db: db)
    }

    /// The relative luminance (CIE Y, 0…1) a decoder sees for these codes.
    @inline(__always) public func luminance(y: Float, cb: Float, cr: Float) -> Float {
        luminance(y: y, chroma: chroma(cb: cb, cr: cr))
    }

    /// The relative luminance a decoder sees for code `y` under chroma `c`.
    @inline(__always) public func luminance(y: Float, chroma c: ChromaTerms) -> Float {
        luminance((y - yOffset) * yStep, dr: c.dr, dg: c.dg, db: c.db)
    }

    /// Luminance of R'G'B' = (y + dr, y + dg, y + db), each clipped to 0…1.
    @inline(__always) func luminance(_ y: Float, dr: Float, dg: Float, db: Float) -> Float {
        0.212671 * linear(y + dr) + 0.715160 * linear(y + dg) + 0.072169 * linear(y + db)
    }

    /// `luminance(y:chroma:)` for four codes under one chroma (a 2×2 block's pixels): the same results.
    @inline(__always) public func luminance4(y: SIMD4<Float>, chroma c: ChromaTerms) -> SIMD4<Float> {
        luminance4((y - yOffset) * yStep, dr: c.dr, dg: c.dg, db: c.db)
    }

    @inline(__always) func luminance4(_ y: SIMD4<Float>, dr: Float, dg: Float, db: Float) -> SIMD4<Float> {
        0.212671 * lookUp4(toLinear, y + dr) + 0.715160 * lookUp4(toLinear, y + dg)
            + 0.072169 * lookUp4(toLinear, y + db)
    }

    /// `luma(forLuminance:chroma:start:)` (one Newton step) for four pixels under one chroma: the same results.
    @inline(__always) public func luma4(
        forLuminance target: SIMD4<Float>, chroma c: ChromaTerms,
        start: SIMD4<Float>
    ) -> SIMD4<Float> {
        let dr = c.dr, dg = c.dg, db = c.db
        let y = (start - yOffset) * yStep
        let t = luminance4(y, dr: dr, dg: dg, db: db)
        @inline(__always) func d(_ c: Float) -> Float { c > 0 && c < 1 ? slope[Int(c * Float(Self.tableSteps))] : 0 }
        @inline(__always) func d4(_ c: SIMD4<Float>) -> SIMD4<Float> { SIMD4(d(c[0]), d(c[1]), d(c[2]), d(c[3])) }
        let derivative = 0.212671 * d4(y + dr) + 0.715160 * d4(y + dg) + 0.072169 * d4(y + db)
        let stepped = y + (target - t) / derivative
        @inline(__always) func solved(_ k: Int) -> Float {
            derivative[k] > 1e-4 ? min(max(stepped[k], -1), 2) : y[k]
        }
        let (low, high): (Float, Float) = encoding.fullRange ? (0, 255) : (16, 235)
        let code = yOffset + yScale * SIMD4(solved(0), solved(1), solved(2), solved(3))
        return SIMD4(
            min(max(code[0], low), high), min(max(code[1], low), high), min(max(code[2], low), high),
            min(max(code[3], low), high))
    }

    /// The Y' code (unrounded) of the neutral grey with this luminance.
    @inline(__always) public func greyLuma(luminance t: Float) -> Float { yOffset + yScale * encoded(t) }

    /// Luminance (0…1) → L*, through the table.
    @inline(__always) public func lightness(luminance t: Float) -> Float { lookUp(toLightness, t) }

    /// The Y' code (unrounded, clamped to the range's codes) that a decoder turns, with chroma `cb`/`cr`, into a
    /// colour of luminance `target`: Newton's method on Y' from `start` (`steps` steps; the decoded luminance is
    /// monotonic in Y' for fixed chroma).
    @inline(__always) public func luma(
        forLuminance target: Float, cb: Float, cr: Float, start: Float,
        steps: Int = 1
    ) -> Float {
        luma(forLuminance: target, chroma: chroma(cb: cb, cr: cr), start: start, steps: steps)
    }

    /// As `luma(forLuminance:cb:cr:start:steps:)`, with the chroma's terms computed once by the caller.
    @inline(__always) public func luma(
        forLuminance target: Float, chroma c: ChromaTerms, start: Float,
        steps: Int = 1
    ) -> Float {
        let dr = c.dr, dg = c.dg, db = c.db
        var y = (start - yOffset) * yStep
        for _ in 0..<steps {
            let r = y + dr, g = y + dg, b = y + db
            let t = luminance(y, dr: dr, dg: dg, db: db)
            @inline(__always) func d(_ c: Float) -> Float {
                c > 0 && c < 1 ? slope[Int(c * Float(Self.tableSteps))] : 0
            }
            let derivative = 0.212671 * d(r) + 0.715160 * d(g) + 0.072169 * d(b)
            guard derivative > 1e-4 else { break }
            y = min(max(y + (target - t) / derivative, -1), 2)
        }
        return min(max(yOffset + yScale * y, encoding.fullRange ? 0 : 16), encoding.fullRange ? 255 : 235)
    }

    /// Lab → R'G'B' (0…1), gamut-mapped at constant luminance.
    @inline(__always) public func rgb(L: Float, a: Float, b: Float) -> SIMD3<Float> {
        let fy = (L + 16) / 116, fx = fy + a / 500, fz = fy - b / 200
        @inline(__always) func finv(_ f: Float) -> Float { f > 0.2068966 ? f * f * f : (f - 16.0 / 116.0) / 7.787 }
        let x = Self.white.x * finv(fx), lum = min(max(finv(fy), 0), 1), z = Self.white.z * finv(fz)
        // Scalar lanes: Swift's generic SIMD3 reductions and masked replaces cost more than the rest of this.
        var r = m.0 * x + m.1 * lum + m.2 * z, g = m.3 * x + m.4 * lum + m.5 * z, bl = m.6 * x + m.7 * lum + m.8 * z
        let low = min(min(r, g), bl), high = max(max(r, g), bl)
        if low < 0 || high > 1 {
            var t: Float = 1
            if low < 0 { t = min(t, lum / (lum - low)) }
            if high > 1 { t = min(t, (1 - lum) / (high - lum)) }
            let s = max(0, t)
            @inline(__always) func pull(_ v: Float) -> Float { min(max(lum + (v - lum) * s, 0), 1) }
            r = pull(r); g = pull(g); bl = pull(bl)
        }
        return SIMD3(encoded(r), encoded(g), encoded(bl))
    }

    /// R'G'B' (0…1) → unrounded codes (Y', Cb, Cr).
    @inline(__always) public func codes(_ c: SIMD3<Float>) -> SIMD3<Float> {
        let y = kr * c.x + kg * c.y + kb * c.z
        let u = (c.z - y) / (2 * (1 - kb)), v = (c.x - y) / (2 * (1 - kr))
        return SIMD3(yOffset + yScale * y, 128 + cScale * u, 128 + cScale * v)
    }
}
