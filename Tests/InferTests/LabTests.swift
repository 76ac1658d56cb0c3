import Testing

@testable import Infer

/// Lab conversions: every fast path against the Double definition (`Lab.referenceLab` / `referenceRGB`).
/// scikit-image parity of the definition itself is checked by Tests/integration/test_lab.py.
struct LabTests {
    /// A deterministic stream of floats in 0…1.
    struct Random {
        var state: UInt64
        mutating func next() -> Double {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Double(state >> 11) / Double(1 << 53)
        }
    }

    static func deltaE(_ p: (Double, Double, Double), _ q: (Float, Float, Float)) -> Double {
        let dl = p.0 - Double(q.0), da = p.1 - Double(q.1), db = p.2 - Double(q.2)
        return (dl * dl + da * da + db * db).squareRoot()
    }

    /// Random colours plus the cube's corners and edges (odd count, so the SIMD tail runs too).
    static func testColours(count: Int) -> [Float] {
        var rng = Random(state: 42)
        var rgb: [Float] = []
        for c in 0..<8 { rgb += [Float(c & 1), Float((c >> 1) & 1), Float((c >> 2) & 1)] }
        for v in stride(from: 0, through: 255, by: 5) {
            let f = Float(v) / 255
            rgb += [f, f, f, f, 0, 0, 0, f, 0, 0, 0, f, f, 1, 0, 1, f, 0]
        }
        for _ in 0..<count { rgb += [Float(rng.next()), Float(rng.next()), Float(rng.next())] }
        return rgb
    }

    /// Largest ΔE between `Lab.convertRGBToLab` of interleaved `rgb` and the Double definition.
    static func worstRGBToLabDeltaE(_ rgb: [Float]) -> Double {
        let n = rgb.count / 3
        var lab = [Float](repeating: .nan, count: rgb.count)
        Lab.convertRGBToLab(rgb, &lab, pixelCount: n)
        var worst = 0.0
        for i in 0..<n {
            let ref = Lab.referenceLab(r: Double(rgb[3 * i]), g: Double(rgb[3 * i + 1]), b: Double(rgb[3 * i + 2]))
            worst = max(worst, deltaE(ref, (lab[3 * i], lab[3 * i + 1], lab[3 * i + 2])))
        }
        return worst
    }

    @Test func floatRGBToLabMatchesDefinition() {
        let worst = Self.worstRGBToLabDeltaE(Self.testColours(count: 20_001))
        #expect(worst <= 0.01, "max ΔE \(worst)")
    }

    @Test func floatLabToRGBMatchesDefinition() {
        var rng = Random(state: 7)
        var lab: [Float] = []
        for _ in 0..<20_003 {
            lab += [Float(rng.next() * 100), Float(rng.next() * 200 - 100), Float(rng.next() * 200 - 100)]
        }
        let n = lab.count / 3
        var rgb = [Float](repeating: .nan, count: lab.count)
        Lab.convertLabToRGB(lab, &rgb, pixelCount: n)
        var worst = 0.0
        for i in 0..<n {
            let ref = Lab.referenceRGB(L: Double(lab[3 * i]), a: Double(lab[3 * i + 1]), b: Double(lab[3 * i + 2]))
            worst = max(
                worst, abs(ref.r - Double(rgb[3 * i])), abs(ref.g - Double(rgb[3 * i + 1])),
                abs(ref.b - Double(rgb[3 * i + 2])))
        }
        #expect(worst <= 1e-4, "max RGB error \(worst)")
    }

    @Test func eightBitPathsAgreeWithFloatPath() {
        // Every 8-bit colour on a stride-3 lattice plus all 0/255 faces' edges: 8-bit → Lab equals the float path
        // fed the same codes, and Lab → 8-bit returns each colour within one level.
        var codes: [UInt8] = []
        for r in stride(from: 0, through: 255, by: 3) {
            for g in stride(from: 0, through: 255, by: 3) {
                for b in [0, 1, 2, 127, 128, 254, 255] + Array(stride(from: 4, through: 250, by: 17)) {
                    codes += [UInt8(r), UInt8(g), UInt8(b)]
                }
            }
        }
        let n = codes.count / 3
        var lab8 = [Float](repeating: .nan, count: codes.count)
        Lab.convertRGB8ToLab(codes, &lab8, pixelCount: n)
        var labF = [Float](repeating: .nan, count: codes.count)
        Lab.convertRGBToLab(codes.map { Float($0) / 255 }, &labF, pixelCount: n)
        var back = [UInt8](repeating: 0, count: codes.count)
        Lab.convertLabToRGB8(lab8, &back, pixelCount: n)
        var lightness = [Float](repeating: .nan, count: n)
        Lab.lightnessFromRGB8(codes, &lightness, pixelCount: n)
        var worstLab: Float = 0, worstLevel = 0, worstL: Float = 0
        for i in 0..<codes.count {
            worstLab = max(worstLab, abs(lab8[i] - labF[i]))
            worstLevel = max(worstLevel, abs(Int(back[i]) - Int(codes[i])))
        }
        for i in 0..<n { worstL = max(worstL, abs(lightness[i] - lab8[3 * i])) }
        #expect(worstLab <= 0.01, "8-bit vs float path: \(worstLab)")
        #expect(worstLevel <= 1, "round trip off by \(worstLevel) levels")
        #expect(worstL <= 1e-3, "L-only path off by \(worstL)")
    }

    @Test func greyTableIsTheLOfGreys() {
        for code in [0, 1, 10, 11, 128, 254, 255] {
            let ref = Lab.referenceLab(r: Double(code) / 255, g: Double(code) / 255, b: Double(code) / 255)
            #expect(abs(Double(Lab.greyLightnessTable[code]) - ref.L) < 1e-4)
            #expect(abs(ref.a) < 0.01 && abs(ref.b) < 0.01, "grey \(code) has chroma \(ref.a), \(ref.b)")
        }
        #expect(Lab.greyLightnessTable[255] > 99.99 && Lab.greyLightnessTable[0] == 0)
    }

    @Test(arguments: [YCbCrEncoding.bt601Full, .bt601Limited, .bt709Full, .bt709Limited])
    func yCbCrDecodesWhatItsMatrixEncoded(encoding: YCbCrEncoding) {
        // Encode chosen R'G'B' codes with the textbook forward matrix, quantise to 8 bits, decode: within 1.5/255.
        let colours: [(Float, Float, Float)] = [
            (0, 0, 0), (1, 1, 1), (1, 0, 0), (0, 1, 0), (0, 0, 1),
            (0.5, 0.25, 0.75), (0.2, 0.6, 0.4)
        ]
        let kr = encoding.kr, kb = encoding.kb, kg = 1 - kr - kb
        for (r, g, b) in colours {
            let y = kr * r + kg * g + kb * b
            let u = (b - y) / (2 * (1 - kb)), v = (r - y) / (2 * (1 - kr))
            let (yc, uc, vc): (Float, Float, Float) =
                encoding.fullRange
                ? (y * 255, 128 + u * 255, 128 + v * 255) : (16 + y * 219, 128 + u * 224, 128 + v * 224)
            func q(_ x: Float) -> UInt8 { UInt8(min(max(x.rounded(), 0), 255)) }
            let out = encoding.rgb(y: q(yc), cb: q(uc), cr: q(vc))
            let err = max(abs(out.0 - r), abs(out.1 - g), abs(out.2 - b))
            #expect(err <= 1.5 / 255 * (encoding.fullRange ? 1 : 1.3), "\(encoding) (\(r),\(g),\(b)) → \(out)")
        }
        // Limited range: footroom and headroom clip instead of going out of range.
        if !encoding.fullRange {
            let black = encoding.rgb(y: 0, cb: 128, cr: 128), white = encoding.rgb(y: 255, cb: 128, cr: 128)
            #expect(black == (0, 0, 0) && white == (1, 1, 1))
        }
    }

    @Test func yCbCr420ToLabMatchesPerPixelDecode() {
        let w = 5, h = 3, cw = 3, ch = 2
        let luma: [UInt8] = (0..<(w * h)).map { UInt8(20 + 15 * $0) }
        let cb: [UInt8] = (0..<(cw * ch)).map { UInt8(90 + 13 * $0) }
        let cr: [UInt8] = (0..<(cw * ch)).map { UInt8(200 - 17 * $0) }
        var lab = [Float](repeating: .nan, count: w * h * 3)
        var scratch = [Float](repeating: 0, count: 6 * w)
        Lab.convertYCbCr420ToLab(
            luma: luma, cb: cb, cr: cr, widthPx: w, heightPx: h, encoding: .bt709Limited,
            lab: &lab, scratchRGB: &scratch)
        var lightness = [Float](repeating: .nan, count: w * h)
        Lab.lightnessFromYCbCr420(
            luma: luma, cb: cb, cr: cr, widthPx: w, heightPx: h, encoding: .bt709Limited,
            lightness: &lightness, scratch: &scratch)
        for y in 0..<h {
            for x in 0..<w {
                let c = (y / 2) * cw + x / 2
                let (r, g, b) = YCbCrEncoding.bt709Limited.rgb(y: luma[y * w + x], cb: cb[c], cr: cr[c])
                let ref = Lab.referenceLab(r: Double(r), g: Double(g), b: Double(b))
                let i = y * w + x
                #expect(Self.deltaE(ref, (lab[3 * i], lab[3 * i + 1], lab[3 * i + 2])) < 0.01)
                #expect(abs(Double(lightness[i]) - ref.L) < 0.01)
            }
        }
    }
}
