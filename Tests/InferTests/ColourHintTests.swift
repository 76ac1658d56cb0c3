import Foundation
import Testing

@testable import Infer

/// `ColourHint` parsing and chroma, and the manifest's `hints` declaration (`ModelBundle.hintInputs`).
@Suite struct ColourHintTests {
    @Test func parsesPointAndColour() throws {
        let hint = try #require(ColourHint(parsing: "120.5,80,#3060c0"))
        #expect(hint == ColourHint(xPx: 120.5, yPx: 80, red: 0x30, green: 0x60, blue: 0xC0))
        #expect(ColourHint(parsing: "1,2,ff0000") == ColourHint(xPx: 1, yPx: 2, red: 255, green: 0, blue: 0))
        for bad in ["1,2", "1,2,#ff00", "1,2,#gg0000", "x,2,#ff0000", "1,2,#ff0000,3", "nan,2,#ff0000", ""] {
            #expect(ColourHint(parsing: bad) == nil, "'\(bad)' is not a hint")
        }
    }

    @Test func chromaIsTheColoursLabAB() {
        // sRGB red is Lab (53.24, 80.09, 67.20), grey has no chroma (D65, the usual constants).
        let red = ColourHint(xPx: 0, yPx: 0, red: 255, green: 0, blue: 0).ab
        #expect(abs(red.a - 80.09) < 0.2 && abs(red.b - 67.20) < 0.2, "\(red)")
        let grey = ColourHint(xPx: 0, yPx: 0, red: 128, green: 128, blue: 128).ab
        #expect(abs(grey.a) < 0.05 && abs(grey.b) < 0.05, "\(grey)")
    }

    @Test func planesHoldEachHintOverItsSquareClampedAtTheEdges() {
        let n = 16, r = ColourHint.patchRadiusPx
        var ab = [Float](repeating: 7, count: 2 * n * n), mask = [Float](repeating: 7, count: n * n)
        // A hint at pixel (3, 12)'s centre, one beyond the top-left corner (clamped to pixel 0, 0), and a later one
        // over the first's square (it wins there).
        let hints = [
            HintPoint(u: 3.5 / 16, v: 12.5 / 16, a: 10, b: -20), HintPoint(u: -0.2, v: -0.2, a: 30, b: 40),
            HintPoint(u: 6.5 / 16, v: 12.5 / 16, a: -5, b: 5)
        ]
        hints.withUnsafeBufferPointer { h in
            ab.withUnsafeMutableBufferPointer { a in
                mask.withUnsafeMutableBufferPointer { m in HintPoint.writePlanes(h, sizePx: n, ab: a, mask: m) }
            }
        }
        func at(_ x: Int, _ y: Int) -> (Float, Float, Float) { (ab[y * n + x], ab[n * n + y * n + x], mask[y * n + x]) }
        #expect(at(0, 0) == (30, 40, 1) && at(r, r) == (30, 40, 1) && at(r + 1, 0) == (0, 0, 0))
        #expect(at(0, 12) == (10, -20, 1), "the first hint where the later one does not reach")
        #expect(at(3, 12) == (-5, 5, 1) && at(6 + r, 15) == (-5, 5, 1), "the later hint wins where they meet")
        #expect(at(6 + r + 1, 12) == (0, 0, 0) && at(3, 12 - r - 1) == (0, 0, 0))
        #expect(at(15, 0) == (0, 0, 0) && at(15, 7) == (0, 0, 0), "zeros elsewhere: the old values are gone")
        // The corner's square, and the two squares' union (columns 3 − r … 6 + r, rows 12 − r … 15).
        let union = (6 + r - max(0, 3 - r) + 1) * (min(15, 12 + r) - (12 - r) + 1)
        #expect(mask.reduce(0, +) == Float((r + 1) * (r + 1) + union), "\(mask.reduce(0, +))")
    }

    func manifest(hints: String?) -> Data {
        let hintsField = hints.map { ", \"hints\": \($0)" } ?? ""
        return Data(
            """
            {"file": "model.onnx", "input": {"shape": [1, 1, 64, 64]}, "output": {"shape": [1, 2, 64, 64]}\(hintsField)}
            """.utf8)
    }

    @Test func aManifestDeclaresItsHintInputs() throws {
        let plain = try ModelBundle.parseManifest(
            manifest(hints: nil), directory: "/m", manifestPath: "/m/manifest.json")
        #expect(plain.hintInputs == nil)
        let hinted = try ModelBundle.parseManifest(
            manifest(
                hints: """
                    {"inputs": [{"name": "h_ab", "shape": [1, 2, 64, 64]}, {"name": "h_m", "shape": [1, 1, 64, 64]}]}
                    """), directory: "/m", manifestPath: "/m/manifest.json")
        #expect(hinted.hintInputs?.ab == "h_ab" && hinted.hintInputs?.mask == "h_m")
        for bad in [
            "{}", "{\"inputs\": []}",
            "{\"inputs\": [{\"name\": \"a\", \"shape\": [1, 2, 64, 64]}, {\"name\": \"m\", \"shape\": [1, 1, 32, 32]}]}",
            "{\"inputs\": [{\"shape\": [1, 2, 64, 64]}, {\"name\": \"m\", \"shape\": [1, 1, 64, 64]}]}"
        ] {
            #expect(throws: ModelBundleError.self, "hints \(bad)") {
                try ModelBundle.parseManifest(manifest(hints: bad), directory: "/m", manifestPath: "/m/manifest.json")
            }
        }
    }

    @Test func stampGivesTheHintsChromaOverItsSquareAndBlendsBackOverAsFarAgain() {
        // A 64x64 output grid for a 256 input: the square's half side is 4.5 input px = 1.125 output px; full strength
        // within it, the model's own beyond 2.25.
        let w = 64, n = 256
        var ab = [Float](repeating: 3, count: 2 * w * w)
        let hints = [HintPoint(u: 0.5, v: 0.25, a: 40, b: -20)]
        hints.withUnsafeBufferPointer { h in
            ab.withUnsafeMutableBufferPointer {
                HintPoint.stamp(h, into: $0, widthPx: w, heightPx: w, inputSizePx: n, scale: 2)
            }
        }
        func at(_ x: Int, _ y: Int) -> (Float, Float) { (ab[y * w + x], ab[w * w + y * w + x]) }
        #expect(at(32, 16) == (20, -10) && at(31, 15) == (20, -10), "the hint's chroma over its square (÷ scale)")
        let edge = at(33, 16)
        #expect(edge.0 > 3 && edge.0 < 20 && edge.1 < 3 && edge.1 > -10, "blended between: \(edge)")
        #expect(at(34, 16) == (3, 3) && at(32, 19) == (3, 3) && at(0, 0) == (3, 3), "the model's own elsewhere")
        // No hints, or a zero scale: untouched.
        var untouched = [Float](repeating: 3, count: 2 * w * w)
        untouched.withUnsafeMutableBufferPointer {
            HintPoint.stamp(
                UnsafeBufferPointer(start: nil, count: 0), into: $0, widthPx: w, heightPx: w, inputSizePx: n, scale: 2)
        }
        #expect(untouched.allSatisfy { $0 == 3 })
    }
}
