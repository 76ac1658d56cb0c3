/// Lab conversions of eight colours at a time, as `SIMD8<Float>` planes: the building blocks of every buffer path,
/// public so a per-pixel stage elsewhere (e.g. a compositor taking L from the camera's Y'CbCr and a, b from the
/// colorizer) can convert in registers without a buffer round trip.
///
///     let (r, g, b) = Lab.rgb8(L: l, a: a, b: b)          // eight pixels → 8-bit sRGB, rounded to nearest
///
/// Units: sRGB components 0…1 (codes/255), L 0…100, a and b in Lab units; 8-bit results are codes 0…255.
/// Accuracy against the Double definition (`Lab.referenceLab` / `referenceRGB`): ΔE about 3e-4 forward (arithmetic
/// curves, any finite input), 2e-5 per RGB component backward (the encode table of `Lab+Tables.swift`; 8-bit results
/// are the nearest code except within 0.01 of a level's midpoint) (LabCurvesTests). `@inlinable`: the vector code is inlined into the caller's module; pure, no
/// allocation, any thread.
extension Lab {
    /// Linear RGB → (X/Xn, Y/Yn, Z/Zn): `rgbToXYZ` with the D65 white folded in (LabTests checks these literals
    /// against the Double matrices).
    @inlinable @inline(__always)
    static func xyzOverWhite(_ r: SIMD8<Float>, _ g: SIMD8<Float>, _ b: SIMD8<Float>)
        -> (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>)
    {
        (
            r * 0.433946363378 + g * 0.376213873136 + b * 0.189825033931,
            r * 0.212671 + g * 0.71516 + b * 0.072169,
            r * 0.0177566745957 + g * 0.109468879439 + b * 0.872704646272
        )
    }

    /// (X/Xn, Y/Yn, Z/Zn) → linear RGB: `xyzToRGB` with the white folded in.
    @inlinable @inline(__always)
    static func linearFromXYZOverWhite(_ x: SIMD8<Float>, _ y: SIMD8<Float>, _ z: SIMD8<Float>)
        -> (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>)
    {
        (
            x * 3.07998030227 + y * -1.53715151627 + z * -0.542821308022,
            x * -0.921247752323 + y * 1.87599000149 + z * 0.0452473395145,
            x * 0.0528904610988 + y * -0.204041338367 + z * 1.15123201196
        )
    }

    /// Eight linear-light RGB colours → L, a, b.
    @inlinable @inline(__always)
    public static func lab(linearR r: SIMD8<Float>, g: SIMD8<Float>, b: SIMD8<Float>)
        -> (L: SIMD8<Float>, a: SIMD8<Float>, b: SIMD8<Float>)
    {
        let (x, y, z) = xyzOverWhite(r, g, b)
        let fx = LabSIMD.labF(x), fy = LabSIMD.labF(y), fz = LabSIMD.labF(z)
        return (fy * 116 - 16, (fx - fy) * 500, (fy - fz) * 200)
    }

    /// Eight sRGB colours (components 0…1; values outside are converted by the same formulas) → L, a, b.
    @inlinable @inline(__always)
    public static func lab(r: SIMD8<Float>, g: SIMD8<Float>, b: SIMD8<Float>)
        -> (L: SIMD8<Float>, a: SIMD8<Float>, b: SIMD8<Float>)
    {
        lab(linearR: LabSIMD.decode(r), g: LabSIMD.decode(g), b: LabSIMD.decode(b))
    }

    /// L only (0…100) of eight linear-light RGB colours: one cube root instead of three.
    @inlinable @inline(__always)
    public static func lightness(linearR r: SIMD8<Float>, g: SIMD8<Float>, b: SIMD8<Float>) -> SIMD8<Float> {
        LabSIMD.labF(r * 0.212671 + g * 0.71516 + b * 0.072169) * 116 - 16
    }

    /// Eight Lab colours → sRGB components 0…1 (clipped, as scikit-image's `lab2rgb`; negative Z clamps to 0).
    @inlinable @inline(__always)
    public static func rgb(L: SIMD8<Float>, a: SIMD8<Float>, b: SIMD8<Float>)
        -> (r: SIMD8<Float>, g: SIMD8<Float>, b: SIMD8<Float>)
    {
        let fy = (L + 16) * Float(1.0 / 116.0)
        let fx = fy + a * Float(1.0 / 500.0)
        let fzRaw = fy - b * Float(1.0 / 200.0)
        let fz = fzRaw.replacing(with: 0, where: fzRaw .< 0)
        let (lr, lg, lb) = linearFromXYZOverWhite(
            LabSIMD.labFInverse(fx), LabSIMD.labFInverse(fy), LabSIMD.labFInverse(fz))
        return (encode(lr), encode(lg), encode(lb))
    }

    /// Eight Lab colours → 8-bit sRGB codes, clipped and rounded to nearest (the compositor's output step).
    @inlinable @inline(__always)
    public static func rgb8(L: SIMD8<Float>, a: SIMD8<Float>, b: SIMD8<Float>)
        -> (r: SIMD8<UInt8>, g: SIMD8<UInt8>, b: SIMD8<UInt8>)
    {
        let (r, g, bb) = codes(rgb(L: L, a: a, b: b))
        return (
            SIMD8<UInt8>(truncatingIfNeeded: r), SIMD8<UInt8>(truncatingIfNeeded: g),
            SIMD8<UInt8>(truncatingIfNeeded: bb)
        )
    }

    /// sRGB components already clipped to 0…1 → codes 0…255 rounded to nearest, as integers: 1.5·2²³ + v puts
    /// round(v) in the low mantissa bits (Swift's vector float → integer conversion is scalarised).
    @inlinable @inline(__always)
    static func codes(_ c: (r: SIMD8<Float>, g: SIMD8<Float>, b: SIMD8<Float>))
        -> (SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>)
    {
        (
            unsafeBitCast(c.r * 255 + 12_582_912.0, to: SIMD8<UInt32>.self) &- 0x4B40_0000,
            unsafeBitCast(c.g * 255 + 12_582_912.0, to: SIMD8<UInt32>.self) &- 0x4B40_0000,
            unsafeBitCast(c.b * 255 + 12_582_912.0, to: SIMD8<UInt32>.self) &- 0x4B40_0000
        )
    }
}
