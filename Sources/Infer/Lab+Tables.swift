#if canImport(Glibc)
    import Glibc
#endif

/// Interpolation tables of (value, slope to the next sample) pairs over 0…1, sampled in Double: one 8-byte load per
/// lane gives both. With SSE2 only (no hardware gather, no FMA) a lookup costs about 6 instructions per value against
/// 10–15 for the arithmetic curves of `LabSIMD`.
///
/// - `fPairs`, Lab's f for the 8-bit paths, where t is known to lie in 0…1: their linear light comes from
///   `linearTable` (0…1), and each row of the white-folded matrix sums to at most 1, so X/Xn, Y/Yn, Z/Zn lie in 0…1
///   too, give or take a float rounding that the last pair's slope extends over. Error below 1.1e-6 (8192 steps;
///   |f''| ≤ 586 above the 0.008856 joint, where f's slope is continuous): ΔE below 1e-3.
/// - `encodePairs`, linear light → sRGB code, for every Lab → RGB path: the argument is clipped to 0…1 first (the
///   output is clipped anyway). Error below 3e-5 (8192 steps; |f''| reaches 2400 just above the 0.0031308
///   joint, where the two segments' slopes differ by 0.17): under 0.01 of an 8-bit level.
extension Lab {
    /// Steps of the f table over 0…1.
    static let fSteps = 8192

    /// Lab's f, `fSteps` + 1 pairs, sampled in Double.
    static let fPairs: [SIMD2<Float>] = (0...fSteps).map { i in
        func f(_ t: Double) -> Double { t > epsilon ? cbrt(t) : kappa * t + 16.0 / 116.0 }
        let v0 = f(Double(i) / Double(fSteps)), v1 = f(Double(i + 1) / Double(fSteps))
        return SIMD2(Float(v0), Float(v1 - v0))
    }

    /// Steps of the encode table over 0…1.
    @usableFromInline static let encodeSteps = 8192

    /// Linear light → sRGB code, `encodeSteps` + 1 pairs.
    @usableFromInline static let encodePairs: [SIMD2<Float>] = (0...encodeSteps).map { i in
        let v0 = referenceEncode(Double(i) / Double(encodeSteps))
        let v1 = referenceEncode(Double(i + 1) / Double(encodeSteps))
        return SIMD2(Float(v0), Float(v1 - v0))
    }

    /// Linear light → sRGB codes 0…1 (clipped; NaN gives 0) through `encodePairs`.
    @inlinable @inline(__always)
    static func encode(_ v: SIMD8<Float>) -> SIMD8<Float> {
        let clipped = v.replacing(with: 0, where: .!(v .> 0)).replacing(with: 1, where: v .> 1)
        return encodePairs.withUnsafeBufferPointer { interpolate(clipped, steps: 8192, $0.baseAddress!) }
    }

    /// Linear interpolation in a pair table at x·`steps`, for x in 0…1 (up to 1 + 1/steps): floor via the 1.5·2²³
    /// rounding trick on x·steps − ½, then one 8-byte load per lane.
    @inlinable @inline(__always)
    static func interpolate(_ x: SIMD8<Float>, steps: Float, _ table: UnsafePointer<SIMD2<Float>>) -> SIMD8<Float> {
        let scaled = x * steps
        let shifted = scaled + (12_582_912.0 - 0.5)
        let index = unsafeBitCast(shifted, to: SIMD8<UInt32>.self) &- 0x4B40_0000
        let frac = scaled - (shifted - 12_582_912.0)
        let p0 = table[Int(index[0])], p1 = table[Int(index[1])], p2 = table[Int(index[2])]
        let p3 = table[Int(index[3])], p4 = table[Int(index[4])], p5 = table[Int(index[5])]
        let p6 = table[Int(index[6])], p7 = table[Int(index[7])]
        let value = SIMD8<Float>(p0.x, p1.x, p2.x, p3.x, p4.x, p5.x, p6.x, p7.x)
        let slope = SIMD8<Float>(p0.y, p1.y, p2.y, p3.y, p4.y, p5.y, p6.y, p7.y)
        return value + slope * frac
    }
}
