import ColorcamCore
import Testing

@testable import Detect

/// The close-look window of a 640×480 frame (`CNNPrintSegmenter.closeLookGrid`): 104 cells of 2 px.
private let window = SegmentationGrid(cellPx: 2, widthCells: 104, heightCells: 104)

/// Two small prints (70 × 56 px) 8 px apart on a teal table, and the scene's frame.
private func twoSmallPrints() -> (FrameBuffer, Quad, Quad) {
    let a = placedQuad(centre: PixelPoint(280, 240), widthPx: 70, heightPx: 56, angleDegrees: 4)
    let b = placedQuad(centre: PixelPoint(358, 244), widthPx: 70, heightPx: 56, angleDegrees: 4)
    return (twoPrintsOnATealTable(a, 70, 56, b, 70, 56), a, b)
}

/// Two small prints whose frame-grid maps run together (interiors painted 5 px wide, no edge line between them:
/// one region twice as wide as a print, which no outline fits) are told apart by a close look, whose maps at 2-px
/// cells show both with their edges: each is placed within 1.5 px from one look at a window centred on the region.
/// Without close looks neither is placed.
@Test func aCloseLookPlacesSmallPrintsTheFrameGridRunsTogether() {
    let (frame, a, b) = twoSmallPrints()
    func detector(closeLooks: Bool) -> (PhotoDetector, PaintedSegmenter) {
        let segmenter = PaintedSegmenter(
            geometry: frame.geometry, interiorQuads: [a.offsettingSides(byPx: 5)!, b.offsettingSides(byPx: 5)!],
            edgeQuads: [], closeLook: (window, [a, b], [a, b]))
        let detector = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .learned)
        detector.learnedParameters.usesCloseLook = closeLooks
        return (detector, segmenter)
    }
    let (looking, segmenter) = detector(closeLooks: true)
    let found = Array(looking.detect(frame))
    #expect(found.count == 2, "\(found)")
    for truth in [a, b] {
        let best = found.map { maxCornerError($0.quad, truth) }.min() ?? .infinity
        #expect(best < 1.5, "corner error \(best) px for \(truth)")
    }
    #expect(segmenter.closeLookOrigins.count == 1)
    if let origin = segmenter.closeLookOrigins.first {
        // Centred on the region (x 238...400, y 207...278 with the painted 5 px), even.
        #expect(origin.x % 2 == 0 && origin.y % 2 == 0)
        #expect(abs(origin.x + 104 - 319) <= 4 && abs(origin.y + 104 - 243) <= 4, "\(origin)")
    }
    let (blind, unused) = detector(closeLooks: false)
    #expect(blind.detect(frame).isEmpty)
    #expect(unused.closeLookOrigins.isEmpty)
}

/// No close look where it cannot pay: a print the frame grid already placed with full support, and a region too
/// large for the window (a print 220 × 170 px whose maps no outline fits: the close look would not hold it).
@Test func noCloseLookAtAWellPlacedPrintOrALargeRegion() {
    let (frame, a, b) = twoSmallPrints()
    let exact = PaintedSegmenter(
        geometry: frame.geometry, interiorQuads: [a, b], edgeQuads: [a, b], closeLook: (window, [a, b], [a, b]))
    let found = PhotoDetector(geometry: frame.geometry, segmenter: exact, mode: .learned).detect(frame)
    #expect(found.count == 2 && found.allSatisfy { $0.confidence >= 1 }, "\(found)")
    #expect(exact.closeLookOrigins.isEmpty)

    let big = placedQuad(centre: PixelPoint(320, 240), widthPx: 220, heightPx: 170, angleDegrees: 10)
    let large = renderFrame(
        widthPx: 640, heightPx: 480, table: (50, 125, 130),
        photos: [(SyntheticPhoto(widthPx: 220, heightPx: 170, seed: 9), big)], noiseSigma: 1)
    let wide = placedQuad(centre: PixelPoint(320, 240), widthPx: 300, heightPx: 120, angleDegrees: 10)
    let blurred = PaintedSegmenter(
        geometry: large.geometry, interiorQuads: [wide], edgeQuads: [], closeLook: (window, [big], [big]))
    _ = PhotoDetector(geometry: large.geometry, segmenter: blurred, mode: .learned).detect(large)
    #expect(blurred.closeLookOrigins.isEmpty)
}
