#if canImport(Glibc)
import Glibc
#endif

/// Lab's f as an interpolation table of (value, slope to the next sample) pairs over 0…1, for the 8-bit paths: one
/// 8-byte load per lane gives both.
///
/// Used only where t is known to lie in 0…1: the 8-bit paths' linear light comes from `linearTable` (0…1), and each
/// row of the white-folded matrix sums to at most 1, so X/Xn, Y/Yn, Z/Zn lie in 0…1 too, give or take a float
/// rounding that the last pair's slope extends over. Interpolation error below 1.1e-6 (8192 steps; |f''| ≤ 586 above
/// the 0.008856 joint, where f's slope is continuous): ΔE below 1e-3.
extension Lab {
    /// Steps of the f table over 0…1.
    static let fSteps = 8192

    /// Lab's f, `fSteps` + 1 pairs, sampled in Double.
    static let fPairs: [SIMD2<Float>] = (0...fSteps).map { i in
        func f(_ t: Double) -> Double { t > epsilon ? cbrt(t) : kappa * t + 16.0 / 116.0 }
        let v0 = f(Double(i) / Double(fSteps)), v1 = f(Double(i + 1) / Double(fSteps))
        return SIMD2(Float(v0), Float(v1 - v0))
    }

    /// Linear interpolation in a pair table at x·`steps`, for x in 0…1 (up to 1 + 1/steps): floor via the 1.5·2²³
    /// rounding trick on x·steps − ½, then one 8-byte load per lane.
    @inline(__always)
    static func interpolate(_ x: V, steps: Float, _ table: UnsafePointer<SIMD2<Float>>) -> V {
        let scaled = x * steps
        let shifted = scaled + (12_582_912.0 - 0.5)
        let index = unsafeBitCast(shifted, to: SIMD8<UInt32>.self) &- 0x4B40_0000
        let frac = scaled - (shifted - 12_582_912.0)
        let p0 = table[Int(index[0])], p1 = table[Int(index[1])], p2 = table[Int(index[2])]
        let p3 = table[Int(index[3])], p4 = table[Int(index[4])], p5 = table[Int(index[5])]
        let p6 = table[Int(index[6])], p7 = table[Int(index[7])]
        let value = V(p0.x, p1.x, p2.x, p3.x, p4.x, p5.x, p6.x, p7.x)
        let slope = V(p0.y, p1.y, p2.y, p3.y, p4.y, p5.y, p6.y, p7.y)
        return value + slope * frac
    }
}
