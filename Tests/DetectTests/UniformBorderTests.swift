import ColorcamCore
import Testing

@testable import Detect

/// A white-bordered print on a near-white table, its outline placed on the picture inside the border: where the
/// segmenter sees the whole sheet as paper, the outline widens to the paper's edge (within 1.5 px); where it sees
/// only the picture (its interior ends at the picture's edge), the outline stays — an even band with an edge beyond
/// it is also what a borderless print's shadow or the table can show.
@Test(arguments: [0.0, 23.0])
func aPictureInsideItsBorderWidensToThePaperWhereTheSegmenterSeesPaper(angleDegrees: Double) {
    let (outer, picture, frame) = borderedPrintScene(
        centre: PixelPoint(300, 250), widthPx: 210, heightPx: 160, angleDegrees: angleDegrees, borderFraction: 0.07,
        seed: 4, tableLuma: 222)
    func widened(segmenterSees paper: Quad) -> Quad? {
        let segmenter = PaintedSegmenter(geometry: frame.geometry, interiorQuads: [paper], edgeQuads: [])
        let detector = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .learned)
        detector.candidates = [Observation(quad: picture.canonicallyOrdered(), confidence: 1, aspectRatio: 0.76)]
        detector.wideningCandidatesToTheirBorders(segmenter.segment(frame), sampler: PlaneSampler(frame))
        return detector.candidates.first?.quad
    }
    if let quad = widened(segmenterSees: outer) {
        #expect(maxCornerError(quad, outer) < 1.5, "widened to \(quad), the paper is \(outer)")
    } else {
        Issue.record("the candidate was lost")
    }
    if let quad = widened(segmenterSees: picture) {
        #expect(maxCornerError(quad, picture) < 0.01, "the segmenter sees only the picture: \(quad)")
    } else {
        Issue.record("the candidate was lost")
    }
}

/// A borderless print whose outline is its paper's edge: outside it lies the table, with no even band ending in a
/// parallel edge, so the outline stays even where the segmenter's interior spills over its edge.
@Test func aBorderlessPrintsOutlineStays() {
    let quad = placedQuad(centre: PixelPoint(320, 240), widthPx: 200, heightPx: 150, angleDegrees: 9)
    let photo = SyntheticPhoto(widthPx: 200, heightPx: 150, seed: 6, colour: false)
    let frame = renderFrame(
        widthPx: 640, heightPx: 480, table: (90, 128, 128), textureAmplitude: 20, photos: [(photo, quad)],
        noiseSigma: 1.5, seed: 5)
    let spill = placedQuad(centre: PixelPoint(320, 240), widthPx: 216, heightPx: 166, angleDegrees: 9)
    let segmenter = PaintedSegmenter(geometry: frame.geometry, interiorQuads: [spill], edgeQuads: [])
    let detector = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .learned)
    detector.candidates = [Observation(quad: quad.canonicallyOrdered(), confidence: 1, aspectRatio: 0.75)]
    detector.wideningCandidatesToTheirBorders(segmenter.segment(frame), sampler: PlaneSampler(frame))
    #expect(detector.candidates.count == 1)
    if let kept = detector.candidates.first?.quad { #expect(maxCornerError(kept, quad) < 0.01, "moved to \(kept)") }
}
