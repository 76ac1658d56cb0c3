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
}
