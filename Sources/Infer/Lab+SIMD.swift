/// Elementwise curves of the Lab kernels on `SIMD8<Float>`, without tables, square roots or Double, for any finite
/// input (Swift has no vector `pow`/`cbrt`, and its vector `squareRoot()` is scalarised on Linux). The buffer paths
/// use tables where the input range is known (`Lab+Tables.swift`, `Lab+FloatForward.swift`) and these elsewhere:
/// `Lab.lab(r:g:b:)`, out-of-range blocks, the 8-bit L-only and Lab paths' fallbacks.
///
/// Every fractional power is an inverse n-th root found by multiplies only:
///
///     z ≈ x^(−1/n) from the bit pattern (a float's bits, read as an integer, are about 2²³·(log₂ x + 127)): 3.4%
///     z ← z·((n+1)/n − (x/n)·zⁿ)                   Newton: error e → (n+1)/2·e²
///     z ← z + z·r·(1/n + (n+1)/(2n²)·r), r = 1 − x·zⁿ   third order: e → (n+1)(2n+1)/(6n³)·(n·e)³
///
/// then  ∛t = t·z²  (n = 3),  u^2.4 = (u·z)³  (n = 5),  v^(1/2.4) = v·z⁷  (n = 12). The sRGB decode of codes in
/// 0…1 uses a (4, 4) rational fit instead (one division). Relative errors against Double (LabCurvesTests): cbrt
/// 3.7e-7, x^2.4 1.5e-6, x^(1/2.4) 3.4e-6, decode 7.8e-7; Lab ΔE about 3e-4. Roots need positive normal
/// arguments: callers clamp each curve's argument to its power segment and select the linear segment afterwards,
/// so zeros, negatives and tiny values never reach a root. Pure functions; `@inlinable` so callers in other modules
/// get the vector code inlined.
@usableFromInline
enum LabSIMD {
    @usableFromInline typealias V = SIMD8<Float>

    /// x^(−1/n) to about 3.4% (the start of the Newton iterations), for x > 0 normal.
    ///
    /// `p` = −1/n and `bias` = (1 + 1/n)·2²³·(127 − σ), σ tuned (tools/profile: minimax over x) per n. The
    /// integer → float conversion is one vector instruction; the way back adds 1.5·2³² so the integer lands in the
    /// mantissa (units of 512, far below the guess's own error), avoiding Swift's scalarised float → int rounding.
    @inlinable @inline(__always)
    static func inverseRootGuess(_ x: V, p: Float, bias: Float) -> V {
        let bits = V(unsafeBitCast(x, to: SIMD8<Int32>.self))
        let shifted = bits * p + bias + 6_442_450_944.0  // 1.5·2³²: exponent 32, one unit = 512
        let guess = (unsafeBitCast(shifted, to: SIMD8<UInt32>.self) &- 0x4FC0_0000) &<< 9
        return unsafeBitCast(guess, to: V.self)
    }

    /// One Newton step for z → x^(−1/n), given `xOverN` = x/n and zⁿ: relative error e → about (n+1)/2·e².
    @inlinable @inline(__always)
    static func newton(_ z: V, _ zn: V, xOverN: V, n: Float) -> V {
        z * ((n + 1) / n - xOverN * zn)
    }

    /// One third-order step for z → x^(−1/n), given zⁿ: with r = 1 − x·zⁿ, the true root is z·(1 − r)^(−1/n), and
    /// the series to r² leaves about (n+1)(2n+1)/(6n³)·(n·e)³.
    @inlinable @inline(__always)
    static func cubicStep(_ z: V, _ zn: V, x: V, n: Float) -> V {
        let r = 1 - x * zn
        return z + z * r * (1 / n + (n + 1) / (2 * n * n) * r)
    }

    /// ∛x for x > 0 (normal): z = x^(−1/3) by a Newton then a third-order step (3.4% → 2.3e-3 → 6e-8), then x·z².
    @inlinable @inline(__always)
    static func cbrt(_ x: V) -> V {
        var z = inverseRootGuess(x, p: -1.0 / 3.0, bias: 1_419_923_968)
        z = newton(z, z * z * z, xOverN: x * (1.0 / 3.0), n: 3)
        z = cubicStep(z, z * z * z, x: x, n: 3)
        return x * (z * z)
    }

    /// x^2.4 for x > 0 (normal): z = x^(−1/5) by a Newton then a third-order step, then (x·z)³ = x^(12/5).
    @inlinable @inline(__always)
    static func pow12over5(_ x: V) -> V {
        var z = inverseRootGuess(x, p: -1.0 / 5.0, bias: 1_277_936_640)
        var z2 = z * z
        z = newton(z, z2 * z2 * z, xOverN: x * (1.0 / 5.0), n: 5)
        z2 = z * z
        z = cubicStep(z, z2 * z2 * z, x: x, n: 5)
        let w = x * z
        return w * w * w
    }

    /// x^(1/2.4) for x > 0 (normal): z = x^(−1/12) by two third-order steps (3% → 1.4e-3 → 2e-7), then
    /// x·z⁷ = x^(5/12).
    @inlinable @inline(__always)
    static func pow5over12(_ x: V) -> V {
        var z = inverseRootGuess(x, p: -1.0 / 12.0, bias: 1_153_712_768)
        for _ in 0..<2 {
            let z4 = (z * z) * (z * z)
            z = cubicStep(z, z4 * z4 * z4, x: x, n: 12)
        }
        let z2 = z * z
        return x * (z2 * z2 * z2 * z)
    }

    /// sRGB codes (0…1; any finite value) → linear light: c/12.92 up to 0.04045, ((c + 0.055)/1.055)^2.4 above.
    ///
    /// Blocks whose codes all lie in 0…1 (the contract) take a (4, 4) rational fit of the power segment on
    /// [0.04045, 1] (relative error 7.6e-7 evaluated in float, 4.8e-7 in exact arithmetic; fitted by
    /// Lawson-weighted least squares on the relative error); other blocks take `pow12over5`.
    @inlinable @inline(__always)
    static func decode(_ c: V) -> V {
        let linear = c * Float(1 / 12.92)
        if any(c .< 0) || any(c .> 1) {
            let u = c.replacing(with: 0.04045, where: c .< 0.04045) * Float(1 / 1.055) + Float(0.055 / 1.055)
            return pow12over5(u).replacing(with: linear, where: c .<= 0.04045)
        }
        var num = c + 0.8334846032536322
        num = num * c + 0.15675956563180457
        num = num * c + 0.009841360481241804
        num = num * c + 0.000203519151302721
        var den = c * 0.012248185099538947 - 0.08690205851174547
        den = den * c + 0.6541041461278908
        den = den * c + 1.176957240351644
        den = den * c + 0.24388247556914475
        return (num / den).replacing(with: linear, where: c .<= 0.04045)
    }

    /// Linear light → sRGB codes clipped to 0…1: 12.92·v up to 0.0031308, 1.055·v^(1/2.4) − 0.055 above.
    @inlinable @inline(__always)
    static func encode(_ v: V) -> V {
        let curve = pow5over12(v.replacing(with: 0.0031308, where: v .< 0.0031308)) * 1.055 - 0.055
        let out = curve.replacing(with: v * 12.92, where: v .<= 0.0031308)
        return out.replacing(with: 0, where: .!(out .> 0)).replacing(with: 1, where: out .> 1)
    }

    /// Lab's f(t): ∛t above 0.008856, 7.787·t + 16/116 up to it.
    @inlinable @inline(__always)
    static func labF(_ t: V) -> V {
        cbrt(t.replacing(with: 0.008856, where: t .< 0.008856))
            .replacing(with: t * 7.787 + Float(16.0 / 116.0), where: t .<= 0.008856)
    }

    /// Inverse of f: f³ above 0.2068966, (f − 16/116)/7.787 up to it.
    @inlinable @inline(__always)
    static func labFInverse(_ f: V) -> V {
        (f * f * f).replacing(with: (f - Float(16.0 / 116.0)) * Float(1 / 7.787), where: f .<= 0.2068966)
    }
}
