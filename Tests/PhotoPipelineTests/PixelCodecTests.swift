import Foundation
import Infer
import Testing

@testable import PhotoPipeline

@Suite struct PixelCodecTests {
    let codec = PixelCodec(encoding: .bt601Full)

    @Test func lightnessMatchesTheReferenceLab() {
        var worst = 0.0
        for y in stride(from: 0, through: 255, by: 5) {
            for cb in stride(from: 0, through: 255, by: 17) {
                for cr in stride(from: 0, through: 255, by: 17) {
                    let rgb = YCbCrEncoding.bt601Full.rgb(y: UInt8(y), cb: UInt8(cb), cr: UInt8(cr))
                    let want = Lab.referenceLab(r: Double(rgb.0), g: Double(rgb.1), b: Double(rgb.2)).L
                    let got = Double(codec.lightness(y: Float(y), cb: Float(cb), cr: Float(cr)))
                    worst = max(worst, abs(got - want))
                }
            }
        }
        #expect(worst < 0.02, "max |ΔL*| \(worst)")
    }

    @Test func inGamutLabComesBackAsTheReferenceRGB() {
        var worst = 0.0, checked = 0
        for l in stride(from: 5.0, through: 95.0, by: 10) {
            for a in stride(from: -40.0, through: 40.0, by: 10) {
                for b in stride(from: -40.0, through: 40.0, by: 10) {
                    let want = Lab.referenceRGB(L: l, a: a, b: b)
                    // Only colours the reference did not clip.
                    let back = Lab.referenceLab(r: want.r, g: want.g, b: want.b)
                    guard abs(back.L - l) < 1e-6, abs(back.a - a) < 1e-6, abs(back.b - b) < 1e-6 else { continue }
                    let got = codec.rgb(L: Float(l), a: Float(a), b: Float(b))
                    worst = max(
                        worst, abs(Double(got.x) - want.r), abs(Double(got.y) - want.g), abs(Double(got.z) - want.b))
                    checked += 1
                }
            }
        }
        #expect(checked > 300)
        #expect(worst < 0.5 / 255, "max error \(worst * 255) levels")
    }

    @Test func outOfGamutColoursKeepTheirLightness() {
        var worst = 0.0
        for l in stride(from: 2.0, through: 98.0, by: 4) {
            for (a, b) in [(100.0, 100.0), (-120.0, 90.0), (80.0, -110.0), (0.0, 127.0), (-60.0, -60.0)] {
                let c = codec.rgb(L: Float(l), a: Float(a), b: Float(b))
                #expect(c.min() >= 0 && c.max() <= 1)
                worst = max(worst, abs(Lab.referenceLab(r: Double(c.x), g: Double(c.y), b: Double(c.z)).L - l))
            }
        }
        #expect(worst < 0.05, "max |ΔL*| \(worst)")
    }

    @Test func codesRoundTripThroughTheDecoder() {
        for encoding in [YCbCrEncoding.bt601Full, .bt601Limited, .bt709Full] {
            let c = PixelCodec(encoding: encoding)
            for rgb in [SIMD3<Float>(0.2, 0.5, 0.9), SIMD3(1, 0, 0), SIMD3(0.5, 0.5, 0.5), SIMD3(0, 0, 0)] {
                let codes = c.codes(rgb)
                let back = c.rgb(y: codes.x, cb: codes.y, cr: codes.z)
                #expect(abs(back - rgb).max() < 1e-4, "\(encoding) \(rgb) → \(codes) → \(back)")
            }
        }
    }

    @Test func cubeRootIsAccurate() {
        var t: Float = 0.0089
        while t <= 1.0 {
            #expect(abs(PixelCodec.cubeRoot(t) - Float(cbrt(Double(t)))) < 2e-7 * Float(cbrt(Double(t))) + 1e-7)
            t *= 1.013
        }
    }
}

@inline(__always) func abs(_ v: SIMD3<Float>) -> SIMD3<Float> { v.replacing(with: -v, where: v .< 0) }
