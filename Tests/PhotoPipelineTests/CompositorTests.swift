import ColorcamCore
import Detect
import Infer
import Testing

@testable import PhotoPipeline

@Suite struct CompositorTests {
    let codec = PixelCodec(encoding: .bt601Full)

    /// Composites constant ab (a, b) over the print of a fresh scene; returns (before, after).
    func composite(a: Float, b: Float, background: Background) -> (FrameBuffer, FrameBuffer) {
        composite(background: background) { _, _ in (a, b) }
    }

    /// Composites ab(u, v) (u, v: grid cells 0..<16) over the print.
    func composite(background: Background, ab abAt: (Int, Int) -> (Float, Float)) -> (FrameBuffer, FrameBuffer) {
        let before = sceneFrame(tableCb: 120, tableCr: 140, quad: printQuad, picture: landscape)
        let after = sceneFrame(tableCb: 120, tableCr: 140, quad: printQuad, picture: landscape)
        let n = 16
        var ab = [Float](repeating: 0, count: 2 * n * n)
        for v in 0..<n { for u in 0..<n { (ab[v * n + u], ab[n * n + v * n + u]) = abAt(u, v) } }
        let cb = [UInt8](UnsafeRawBufferPointer(after.cb)), cr = [UInt8](UnsafeRawBufferPointer(after.cr))
        if background == .gray {
            after.cb.initializeMemory(as: UInt8.self, repeating: 128)
            after.cr.initializeMemory(as: UInt8.self, repeating: 128)
        }
        ab.withUnsafeMutableBufferPointer { p in
            let grid = ColourCompositor.Grid(ab: UnsafePointer(p.baseAddress!), widthPx: n, heightPx: n, scale: 1)
            #expect(
                ColourCompositor.composite(
                    grid, into: after, at: printQuad, originalCb: cb, originalCr: cr,
                    codec: codec, featherPx: 2))
        }
        return (before, after)
    }

    /// Frame pixels at least `margin` px inside (positive) or outside (negative) the print's outline.
    func pixels(_ g: FrameGeometry, inside: Bool, margin: Double) -> [(Int, Int)] {
        var out: [(Int, Int)] = []
        for y in 0..<g.heightPx {
            for x in 0..<g.widthPx {
                let p = PixelPoint(Double(x) + 0.5, Double(y) + 0.5)
                let d = distanceToOutline(p)
                if inside ? (printQuad.contains(p) && d >= margin) : (!printQuad.contains(p) && d >= margin) {
                    out.append((x, y))
                }
            }
        }
        return out
    }

    func distanceToOutline(_ p: PixelPoint) -> Double {
        (0..<4).map { i -> Double in
            let a = printQuad[i], b = printQuad[(i + 1) % 4], ab = b - a
            let t = min(1, max(0, ((p - a) * ab).sum() / (ab * ab).sum()))
            let d = p - (a + t * ab)
            return (d * d).sum().squareRoot()
        }.min()!
    }

    @Test(arguments: [Background.gray, .original])
    func insideKeepsTheLiveLightnessAndTakesTheColour(background: Background) {
        let (before, after) = composite(a: 25, b: 35, background: background)
        var worst = 0.0, count = 0
        for (x, y) in pixels(before.geometry, inside: true, margin: 3) {
            worst = max(worst, abs(decodedLightness(after, x, y) - decodedLightness(before, x, y)))
            count += 1
        }
        #expect(count > 15_000)
        #expect(worst <= 1.0, "max |ΔL*| inside \(worst)")
        // The colour arrived: warm (Cr above neutral, Cb below) well inside the print.
        let c = (120 / 2) * after.geometry.chromaWidthPx + 150 / 2
        #expect(after.cr.load(fromByteOffset: c, as: UInt8.self) > 140)
        #expect(after.cb.load(fromByteOffset: c, as: UInt8.self) < 116)
    }

    @Test func strongAndVaryingColoursStillKeepTheLightness() {
        // Saturated, changing every grid cell (out of gamut for much of the picture).
        let (before, after) = composite(background: .gray) { u, v in
            (Float((u * 37 + v * 11) % 160) - 80, Float((u * 13 + v * 29) % 180) - 90)
        }
        var worst = 0.0
        for (x, y) in pixels(before.geometry, inside: true, margin: 3) {
            worst = max(worst, abs(decodedLightness(after, x, y) - decodedLightness(before, x, y)))
        }
        #expect(worst <= 1.0, "max |ΔL*| inside \(worst)")
    }

    @Test(arguments: [Background.gray, .original])
    func outsideIsUntouchedOrItsLuma(background: Background) {
        let (before, after) = composite(a: -30, b: 50, background: background)
        let g = before.geometry
        for (x, y) in pixels(g, inside: false, margin: 0.75) {
            #expect(
                after.luma.load(fromByteOffset: y * g.widthPx + x, as: UInt8.self)
                    == before.luma.load(fromByteOffset: y * g.widthPx + x, as: UInt8.self))
        }
        // Chroma blocks wholly outside (all four of their pixels ≥ 2 px outside the outline).
        var checked = 0
        for cy in 0..<g.chromaHeightPx {
            for cx in 0..<g.chromaWidthPx {
                let corners = [(0.0, 0.0), (2.0, 0.0), (0.0, 2.0), (2.0, 2.0)].map {
                    PixelPoint(Double(2 * cx) + $0.0, Double(2 * cy) + $0.1)
                }
                guard corners.allSatisfy({ !printQuad.contains($0) && distanceToOutline($0) > 1 }) else { continue }
                let c = cy * g.chromaWidthPx + cx
                let want: (UInt8, UInt8) =
                    background == .gray
                    ? (128, 128)
                    : (
                        before.cb.load(fromByteOffset: c, as: UInt8.self),
                        before.cr.load(fromByteOffset: c, as: UInt8.self)
                    )
                #expect(after.cb.load(fromByteOffset: c, as: UInt8.self) == want.0)
                #expect(after.cr.load(fromByteOffset: c, as: UInt8.self) == want.1)
                checked += 1
            }
        }
        #expect(checked > 10_000)
    }

    @Test func degenerateQuadLeavesTheFrameAlone() {
        let frame = sceneFrame(quad: printQuad, picture: landscape)
        let copy = [UInt8](UnsafeRawBufferPointer(frame.pixels))
        var ab = [Float](repeating: 10, count: 8)
        let flat = Quad(PixelPoint(10, 10), PixelPoint(20, 10), PixelPoint(30, 10), PixelPoint(40, 10))
        ab.withUnsafeMutableBufferPointer { p in
            let grid = ColourCompositor.Grid(ab: UnsafePointer(p.baseAddress!), widthPx: 2, heightPx: 2, scale: 1)
            _ = ColourCompositor.composite(
                grid, into: frame, at: flat, originalCb: copy, originalCr: copy,
                codec: codec, featherPx: 2)
        }
        #expect([UInt8](UnsafeRawBufferPointer(frame.pixels)) == copy)
    }
}
