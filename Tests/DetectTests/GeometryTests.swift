import ColorcamCore
import Testing

@testable import Detect

#if canImport(Glibc)
    import Glibc
#endif

@Test func homographyMapsCornersAndInverts() throws {
    let from = Quad(PixelPoint(0, 0), PixelPoint(200, 0), PixelPoint(200, 100), PixelPoint(0, 100))
    let to = Quad(PixelPoint(13.5, 20.25), PixelPoint(230, 35), PixelPoint(210, 160), PixelPoint(25, 140))
    let h = try #require(Homography(from: from, to: to))
    for i in 0..<4 {
        let p = try #require(h.apply(from[i]))
        #expect(((p - to[i]) * (p - to[i])).sum().squareRoot() < 1e-9)
    }
    let inv = try #require(h.inverse)
    for p in [PixelPoint(50, 50), PixelPoint(199, 1), PixelPoint(3, 97)] {
        let q = try #require(h.apply(p)), back = try #require(inv.apply(q))
        #expect(((back - p) * (back - p)).sum().squareRoot() < 1e-9)
    }
    #expect(Homography(from: from, to: Quad(.zero, PixelPoint(1, 1), PixelPoint(2, 2), PixelPoint(3, 3))) == nil)
}

@Test func quadPredicates() {
    let square = Quad(PixelPoint(0, 0), PixelPoint(10, 0), PixelPoint(10, 10), PixelPoint(0, 10))
    #expect(square.isConvex)
    #expect(square.area == 100)
    #expect(square.maxRightAngleDeviationDegrees < 1e-9)
    #expect(square.contains(PixelPoint(5, 5)))
    #expect(!square.contains(PixelPoint(11, 5)))
    let bowtie = Quad(PixelPoint(0, 0), PixelPoint(10, 10), PixelPoint(10, 0), PixelPoint(0, 10))
    #expect(!bowtie.isConvex)
    let q = Quad(PixelPoint(10, 100), PixelPoint(100, 100), PixelPoint(100, 10), PixelPoint(10, 10))
    let c = q.canonicallyOrdered()
    #expect(c[0] == PixelPoint(10, 10) && c[1] == PixelPoint(100, 10) && c[2] == PixelPoint(100, 100))
}

/// PSNR in dB between two planes of equal size, over the interior (a `margin` px frame excluded).
func psnr(_ a: [Double], _ b: [Double], widthPx: Int, heightPx: Int, margin: Int) -> Double {
    var sum = 0.0, n = 0.0
    for y in margin..<(heightPx - margin) {
        for x in margin..<(widthPx - margin) {
            let d = a[y * widthPx + x] - b[y * widthPx + x]
            sum += d * d; n += 1
        }
    }
    return 10 * log10(255 * 255 / max(1e-9, sum / n))
}

/// A print rendered into a frame with rotation and perspective, rectified back at its own size: PSNR ≥ 30 dB
/// against the source picture, with the true corners and with the detector's corners.
@Test func rectifiedPrintMatchesItsSource() throws {
    let photo = SyntheticPhoto(widthPx: 240, heightPx: 180, seed: 11)
    let quad = placedQuad(centre: PixelPoint(330, 240), widthPx: 300, heightPx: 225, angleDegrees: 11, perspective: 10)
    let frame = renderFrame(widthPx: 640, heightPx: 480, table: (50, 128, 128), photos: [(photo, quad)], noiseSigma: 1)
    let detected = try #require(PhotoDetector(geometry: frame.geometry).detect(frame).first)
    let source = photo.luma.map(Double.init)
    for corners in [quad, detected.quad] {
        let ordered = corners.canonicallyOrdered()
        // Align the detector's canonical corner order with the photo's own top-left (nearest to quad[0]).
        var best = 0, bestDistance = Double.infinity
        for s in 0..<4 {
            let d = ((ordered[s] - quad[0]) * (ordered[s] - quad[0])).sum()
            if d < bestDistance { bestDistance = d; best = s }
        }
        let aligned = Quad(ordered[best], ordered[best + 1], ordered[best + 2], ordered[best + 3])
        let out = FrameBuffer(geometry: FrameGeometry(widthPx: 240, heightPx: 180, chroma: .yuv444))
        #expect(Rectifier.rectify(frame, quad: aligned, into: out) != nil)
        let got = Array(out.luma.bindMemory(to: UInt8.self)).map(Double.init)
        let db = psnr(got, source, widthPx: 240, heightPx: 180, margin: 2)
        #expect(db >= 30, "PSNR \(db) dB")
    }
    let size = Rectifier.uprightSize(for: quad, longSidePx: 256)
    #expect(size.widthPx == 256 && abs(size.heightPx - 192) <= 8, "\(size)")
}
