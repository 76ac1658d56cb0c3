import Testing

@testable import Infer

#if canImport(Glibc)
    import Glibc
#endif

/// The vector curves of `LabSIMD`, the white-folded matrix literals and the public eight-lane API (`Lab+Lanes.swift`)
/// against the Double definition.
struct LabCurvesTests {
    /// Max relative error of `f` against `reference` over `count` points spaced geometrically over lo…hi.
    static func worstRelative(
        lo: Double, hi: Double, count: Int = 1 << 16, _ f: (SIMD8<Float>) -> SIMD8<Float>,
        _ reference: (Double) -> Double
    ) -> Double {
        var worst = 0.0
        var i = 0
        while i < count {
            var v = SIMD8<Float>()
            for k in 0..<8 { v[k] = Float(lo * pow(hi / lo, Double(i + k) / Double(count - 1))) }
            let out = f(v)
            for k in 0..<8 {
                let r = reference(Double(v[k]))
                worst = max(worst, abs(Double(out[k]) / r - 1))
            }
            i += 8
        }
        return worst
    }

    @Test func rootsAndPowersMatchDouble() {
        // Measured 3.7e-7, 1.5e-6, 3.4e-6: bounds leave 2–3× headroom and fail on one missing iteration (≥ 1e-5).
        let cbrtError = Self.worstRelative(lo: 1e-3, hi: 4, LabSIMD.cbrt) { cbrt($0) }
        let pow24Error = Self.worstRelative(lo: 0.05, hi: 4, LabSIMD.pow12over5) { pow($0, 2.4) }
        let pow512Error = Self.worstRelative(lo: 1e-3, hi: 4, LabSIMD.pow5over12) { pow($0, 5.0 / 12.0) }
        #expect(cbrtError < 1e-6, "cbrt \(cbrtError)")
        #expect(pow24Error < 4e-6, "x^2.4 \(pow24Error)")
        #expect(pow512Error < 8e-6, "x^(1/2.4) \(pow512Error)")
    }

    @Test func sRGBCurvesMatchDefinition() {
        // The power segments (rational fit on 0.04045…1; Newton outside 0…1), then both segments on a linear sweep.
        let decodeError = Self.worstRelative(lo: 0.0405, hi: 1, LabSIMD.decode) { Lab.referenceLinear($0) }
        let decodeOutside = Self.worstRelative(lo: 1.001, hi: 3, LabSIMD.decode) { Lab.referenceLinear($0) }
        let encodeError = Self.worstRelative(lo: 0.00314, hi: 1, LabSIMD.encode) { Lab.referenceEncode($0) }
        #expect(decodeError < 2e-6, "decode \(decodeError)")
        #expect(decodeOutside < 4e-6, "decode above 1 \(decodeOutside)")
        #expect(encodeError < 1e-5, "encode \(encodeError)")
        var worst = 0.0, worstTable = 0.0
        for i in 0..<40_000 {
            // The encode table (Lab → RGB paths) against the definition, off its sample points.
            let v = (Double(i) + 0.37) / 40_000 * 1.1 - 0.05
            let e = Lab.encode(SIMD8(repeating: Float(v)))[2]
            worstTable = max(worstTable, abs(Double(e) - min(max(Lab.referenceEncode(max(v, 0)), 0), 1)))
        }
        #expect(worstTable < 3e-5, "encode table \(worstTable)")
        for i in 0..<4096 {
            let c = Double(i) / 4095 * 1.2 - 0.1
            let d = LabSIMD.decode(SIMD8(repeating: Float(c)))[3]
            worst = max(worst, abs(Double(d) - Lab.referenceLinear(c)))
            let e = LabSIMD.encode(SIMD8(repeating: Float(c)))[5]
            worst = max(worst, abs(Double(e) - min(max(Lab.referenceEncode(c), 0), 1)))
        }
        #expect(worst < 1e-5, "absolute error \(worst)")
    }

    @Test func matrixLiteralsMatchDefinition() {
        let white = [Lab.whiteD65.x, Lab.whiteD65.y, Lab.whiteD65.z]
        for column in 0..<3 {
            var unit = [SIMD8<Float>(repeating: 0), SIMD8<Float>(repeating: 0), SIMD8<Float>(repeating: 0)]
            unit[column] = SIMD8(repeating: 1)
            let forward = Lab.xyzOverWhite(unit[0], unit[1], unit[2])
            let inverse = Lab.linearFromXYZOverWhite(unit[0], unit[1], unit[2])
            let f = [forward.0[0], forward.1[0], forward.2[0]], g = [inverse.0[0], inverse.1[0], inverse.2[0]]
            for row in 0..<3 {
                let fRef = Lab.rgbToXYZ[row][column] / white[row], gRef = Lab.xyzToRGB[row][column] * white[column]
                #expect(abs(Double(f[row]) - fRef) <= 1e-7 * max(1, abs(fRef)), "forward [\(row)][\(column)]")
                #expect(abs(Double(g[row]) - gRef) <= 1e-7 * max(1, abs(gRef)), "inverse [\(row)][\(column)]")
            }
        }
    }

    @Test func laneAPIMatchesDefinition() {
        var rng = LabTests.Random(state: 11)
        var worstDeltaE = 0.0, worstLevel = 0.0
        for _ in 0..<4000 {
            var r = SIMD8<Float>(), g = SIMD8<Float>(), b = SIMD8<Float>()
            for k in 0..<8 { r[k] = Float(rng.next()); g[k] = Float(rng.next()); b[k] = Float(rng.next()) }
            let lab = Lab.lab(r: r, g: g, b: b)
            let rgb8 = Lab.rgb8(L: lab.L, a: lab.a, b: lab.b)
            for k in 0..<8 {
                let ref = Lab.referenceLab(r: Double(r[k]), g: Double(g[k]), b: Double(b[k]))
                worstDeltaE = max(worstDeltaE, LabTests.deltaE(ref, (lab.L[k], lab.a[k], lab.b[k])))
                // 8-bit output of the lanes vs the Double inverse of the same Lab, in levels (0.5 = rounding).
                let back = Lab.referenceRGB(L: Double(lab.L[k]), a: Double(lab.a[k]), b: Double(lab.b[k]))
                worstLevel = max(
                    worstLevel, abs(Double(rgb8.r[k]) - back.r * 255), abs(Double(rgb8.g[k]) - back.g * 255),
                    abs(Double(rgb8.b[k]) - back.b * 255))
            }
        }
        #expect(worstDeltaE <= 0.01, "lanes ΔE \(worstDeltaE)")
        #expect(worstLevel <= 0.52, "lanes → 8-bit off by \(worstLevel) levels")
        // Out of gamut clips like scikit-image (lab2rgb gives 184.18, 0, 255 and 0, 177.21, 0 for these).
        let clipped = Lab.rgb8(
            L: SIMD8(50, 60, 50, 60, 50, 60, 50, 60), a: SIMD8(120, -100, 120, -100, 120, -100, 120, -100),
            b: SIMD8(-120, 100, -120, 100, -120, 100, -120, 100))
        #expect(clipped.r[0] == 184 && clipped.g[0] == 0 && clipped.b[0] == 255, "\(clipped)")
        #expect(clipped.r[1] == 0 && clipped.g[1] == 177 && clipped.b[1] == 0, "\(clipped)")
    }

    @Test func floatPathOutsideUnitRangeFollowsFormulas() {
        // Codes outside 0…1 (and X, Y, Z outside 0…1) leave the tables for the arithmetic curves.
        var rng = LabTests.Random(state: 5)
        var rgb: [Float] = []
        for _ in 0..<3001 { rgb += [Float(rng.next() * 1.6 - 0.3), Float(rng.next()), Float(rng.next() * 1.6 - 0.3)] }
        let worst = LabTests.worstRGBToLabDeltaE(rgb)
        #expect(worst <= 0.01, "max ΔE \(worst)")
    }

    @Test func nanInputStaysInItsPixel() {
        // A NaN code must never become a table index: its pixel is NaN, its block's other pixels are still right.
        var rgb: [Float] = [0.2, 0.5, 0.7, .nan, 0.5, 0.5, 1, 1, 1]
        rgb += [Float](repeating: 0.25, count: 3 * 13)
        var lab = [Float](repeating: 0, count: rgb.count)
        Lab.convertRGBToLab(rgb, &lab, pixelCount: rgb.count / 3)
        #expect(lab[3].isNaN)
        let ref = Lab.referenceLab(r: 0.2, g: 0.5, b: 0.7), white = Lab.referenceLab(r: 1, g: 1, b: 1)
        #expect(LabTests.deltaE(ref, (lab[0], lab[1], lab[2])) < 0.01)
        #expect(LabTests.deltaE(white, (lab[6], lab[7], lab[8])) < 0.01)
        var back = [Float](repeating: 0, count: rgb.count)
        Lab.convertLabToRGB(lab, &back, pixelCount: rgb.count / 3)  // NaN Lab → clipped, no out-of-range lookup
        #expect(back[3] == 0 && abs(back[6] - 1) < 1e-4)
    }
}
