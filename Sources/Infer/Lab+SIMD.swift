/// Elementwise transcendental functions on `SIMD8<Float>` for the Lab kernels (Swift has no vector `pow`/`cbrt`).
///
/// Accuracy (checked through LabTests' ΔE bounds): `log2` within 4e-8 absolute, `exp2` within 3e-7 relative;
/// `cbrt` (as exp2 of log2 / 3) within about 3e-7 relative, for positive normal inputs.
/// Inputs must be positive and normal where stated; callers select the linear segments of the sRGB and Lab
/// curves separately, so the tiny and zero inputs never reach these.
enum LabSIMD {
    typealias V = SIMD8<Float>

    /// log2(x) for x > 0 (normal). Splits x = m·2^e with m in [√½, √2), then an odd series in t = (m−1)/(m+1).
    @inline(__always)
    static func log2(_ x: V) -> V {
        let bits = unsafeBitCast(x, to: SIMD8<UInt32>.self)
        // Exponent as a float without SIMD int→float conversion (Swift's generic one is not vectorised):
        // 2²³ + k has the bit pattern 0x4B00_0000 + k.
        var e = unsafeBitCast(((bits &>> 23) & 0xFF) | 0x4B00_0000, to: V.self) - (8_388_608.0 + 127.0)
        var m = unsafeBitCast((bits & 0x007F_FFFF) | 0x3F80_0000, to: V.self)
        let big = m .> 1.41421356
        m.replace(with: m * 0.5, where: big)
        e.replace(with: e + 1, where: big)
        let t = (m - 1) / (m + 1)
        let t2 = t * t
        // 2/ln2 · (t + t³/3 + t⁵/5 + t⁷/7); |t| ≤ 0.1716, so the next term is below 4e-8.
        var p: V = V(repeating: 1.0 / 7.0)
        p = p * t2 + 1.0 / 5.0
        p = p * t2 + 1.0 / 3.0
        p = p * t2 + 1.0
        return e + p * t * 2.8853900817779268
    }

    /// 2^y for −126 < y < 127. Splits y = n + f with |f| ≤ ½, then a degree-7 series of e^(f·ln2).
    @inline(__always)
    static func exp2(_ y: V) -> V {
        // Round to nearest with the 1.5·2²³ trick (|y| < 2²²): 1.5·2²³ + k has the bit pattern 0x4B40_0000 + k,
        // which also yields k as an integer without a (non-vectorised) SIMD conversion.
        let shifted = y + 12_582_912.0
        let n = shifted - 12_582_912.0
        let k = unsafeBitCast(shifted, to: SIMD8<UInt32>.self) &- 0x4B40_0000
        let f = (y - n) * 0.6931471805599453
        // Degree 6: |f| ≤ 0.347, so the first omitted term is below 3e-7 relative.
        var p: V = V(repeating: 1.0 / 720.0)
        p = p * f + 1.0 / 120.0
        p = p * f + 1.0 / 24.0
        p = p * f + 1.0 / 6.0
        p = p * f + 0.5
        p = p * f + 1.0
        p = p * f + 1.0
        let scale = unsafeBitCast((k &+ 127) &<< 23, to: V.self)
        return p * scale
    }

    /// x^p for x > 0 (normal).
    @inline(__always)
    static func pow(_ x: V, _ p: Float) -> V { exp2(log2(x) * p) }

    /// ∛x for x > 0 (normal): 2^(log2(x)/3) (relative error about 3e-7, ample for ΔE 0.01).
    @inline(__always)
    static func cbrt(_ x: V) -> V { exp2(log2(x) * (1.0 / 3.0)) }
}
