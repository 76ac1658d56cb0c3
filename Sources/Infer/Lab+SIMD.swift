/// Elementwise transcendental functions on `SIMD8<Float>` for the Lab kernels (Swift has no vector `pow`/`cbrt`).
///
/// Accuracy (checked against Double in LabTests): `log2` and `exp2` within 2e-7 relative on the ranges used;
/// `cbrt` within 1 ulp-ish (3 Newton steps from a bit-level estimate) for positive normal inputs.
/// Inputs must be positive and normal where stated; callers select the linear segments of the sRGB and Lab
/// curves separately, so the tiny and zero inputs never reach these.
enum LabSIMD {
    typealias V = SIMD8<Float>

    /// log2(x) for x > 0 (normal). Splits x = m·2^e with m in [√½, √2), then an odd series in t = (m−1)/(m+1).
    @inline(__always)
    static func log2(_ x: V) -> V {
        let bits = unsafeBitCast(x, to: SIMD8<UInt32>.self)
        var e = V(SIMD8<Int32>(truncatingIfNeeded: (bits &>> 23) & 0xFF) &- 127)
        var m = unsafeBitCast((bits & 0x007F_FFFF) | 0x3F80_0000, to: V.self)
        let big = m .> 1.41421356
        m.replace(with: m * 0.5, where: big)
        e.replace(with: e + 1, where: big)
        let t = (m - 1) / (m + 1)
        let t2 = t * t
        // 2/ln2 · (t + t³/3 + t⁵/5 + t⁷/7 + t⁹/9)
        var p: V = V(repeating: 1.0 / 9.0)
        p = p * t2 + 1.0 / 7.0
        p = p * t2 + 1.0 / 5.0
        p = p * t2 + 1.0 / 3.0
        p = p * t2 + 1.0
        return e + p * t * 2.8853900817779268
    }

    /// 2^y for −126 < y < 127. Splits y = n + f with |f| ≤ ½, then a degree-7 series of e^(f·ln2).
    @inline(__always)
    static func exp2(_ y: V) -> V {
        let n = y.rounded(.toNearestOrEven)
        let f = (y - n) * 0.6931471805599453
        var p: V = V(repeating: 1.0 / 5040.0)
        p = p * f + 1.0 / 720.0
        p = p * f + 1.0 / 120.0
        p = p * f + 1.0 / 24.0
        p = p * f + 1.0 / 6.0
        p = p * f + 0.5
        p = p * f + 1.0
        p = p * f + 1.0
        let scale = unsafeBitCast(SIMD8<UInt32>(truncatingIfNeeded: SIMD8<Int32>(n) &+ 127) &<< 23, to: V.self)
        return p * scale
    }

    /// x^p for x > 0 (normal).
    @inline(__always)
    static func pow(_ x: V, _ p: Float) -> V { exp2(log2(x) * p) }

    /// ∛x for x > 0 (normal): bit-level estimate, then three Newton steps.
    @inline(__always)
    static func cbrt(_ x: V) -> V {
        var y = unsafeBitCast(unsafeBitCast(x, to: SIMD8<UInt32>.self) / 3 &+ 0x2A51_37A0, to: V.self)
        for _ in 0..<3 { y = y - (y * y * y - x) / (3 * y * y) }
        return y
    }
}
