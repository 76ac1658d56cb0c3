import ColorcamCore
import Testing

@testable import Detect

/// How the learned pass overrules outlines found before it: an outline across several of the segmenter's prints is
/// dropped, and a close look replaces only the outline on its own print.
@Suite struct CandidateArbitrationTests {
    /// `extractor` (the frame grid's: 160 × 120 cells) holding the regions of a foreground mask with the given blocks
    /// of cells set (x0, y0, x1, y1 inclusive).
    @discardableResult
    private func regions(
        _ blocks: [(Int, Int, Int, Int)],
        into extractor: RegionExtractor = RegionExtractor(
            widthPx: 160, heightPx: 120)
    ) -> RegionExtractor {
        let w = 160, h = 120
        var mask = [UInt8](repeating: 0, count: w * h)
        for (x0, y0, x1, y1) in blocks {
            for y in y0...y1 { for x in x0...x1 { mask[y * w + x] = 1 } }
        }
        mask.withUnsafeBufferPointer {
            extractor.extract(foreground: $0.baseAddress!, minimumSidePx: 3, openingRadius: 0)
        }
        return extractor
    }

    private func detector() -> PhotoDetector {
        let geometry = FrameGeometry(widthPx: 640, heightPx: 480, chroma: .yuv420(.jpeg))
        let segmenter = PaintedSegmenter(geometry: geometry, interiorQuads: [], edgeQuads: [])
        return PhotoDetector(geometry: geometry, segmenter: segmenter, mode: .both)
    }

    /// A classic outline spanning two print-sized regions (cells of 4 px; each 24 × 18 cells, 96 × 72 px) is dropped; one
    /// holding a single region, or a second region smaller than the smallest print (6 × 6 cells: 24 px square, under
    /// the 38.4 px minimum side), is kept; an outline beside them holds none and is kept. Candidates before `from`
    /// (the learned pass's) are not judged.
    @Test func anOutlineAcrossTwoOfTheSegmentersPrintsIsDropped() {
        let across = Quad(PixelPoint(90, 90), PixelPoint(370, 90), PixelPoint(370, 190), PixelPoint(90, 190))
        let beside = Quad(PixelPoint(400, 300), PixelPoint(500, 300), PixelPoint(500, 380), PixelPoint(400, 380))
        let minimumSidePx = 0.08 * 480
        func kept(_ blocks: [(Int, Int, Int, Int)]) -> [Quad] {
            let d = detector()
            let learned = Observation(quad: across, confidence: 1, aspectRatio: 0.7)  // a learned outline: not judged
            d.candidates = [learned] + [across, beside].map { Observation(quad: $0, confidence: 0.9, aspectRatio: 0.7) }
            regions(blocks, into: d.learnedRegions!)
            d.droppingCandidatesAcrossRegions(in: 1..<3, minimumSidePx: minimumSidePx)
            #expect(d.candidates.first == learned)
            d.candidates.removeFirst()
            return d.candidates.map(\.quad)
        }
        #expect(kept([(25, 25, 48, 42), (60, 25, 83, 42)]) == [beside])
        #expect(kept([(25, 25, 48, 42)]) == [across, beside])
        #expect(kept([(25, 25, 48, 42), (70, 30, 75, 35)]) == [across, beside])
    }

    /// A close look at a region whose box holds a print and part of its neighbour: the outline already on the print
    /// (as well supported as the look's) stays, and the neighbour the look also placed is kept beside it, not
    /// dropped with the look's outline on the same print.
    @Test func aCloseLookKeepsItsOutlineOnANeighbour() throws {
        let a = placedQuad(centre: PixelPoint(280, 240), widthPx: 70, heightPx: 56, angleDegrees: 4)
        let b = placedQuad(centre: PixelPoint(358, 244), widthPx: 70, heightPx: 56, angleDegrees: 4)
        let frame = twoPrintsOnATealTable(a, 70, 56, b, 70, 56)
        let window = SegmentationGrid(cellPx: 2, widthCells: 104, heightCells: 104)
        let segmenter = PaintedSegmenter(
            geometry: frame.geometry, interiorQuads: [], edgeQuads: [], closeLook: (window, [a, b], [a, b]))
        let d = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .both)
        d.learnedParameters.closeLookBelowConfidence = 1.1  // look although the outline there is fully supported
        let previous = Observation(quad: a.canonicallyOrdered(), confidence: 1, aspectRatio: 0.8)
        d.candidates = [previous]
        // A frame-grid region over print a and the left part of b: its box (x 244…364 px) holds both centres, and
        // its own centre (304, 240) lies in a's outline.
        let extractor = regions([(61, 51, 90, 68)])
        let region = try #require(extractor.regions.first)
        d.lookCloser(at: region, frame: frame, sampler: PlaneSampler(frame), minimumSidePx: 0.08 * 480)
        #expect(segmenter.closeLookOrigins.count == 1)
        #expect(d.candidates.count == 2, "\(d.candidates)")
        #expect(d.candidates.contains(previous), "the outline there stays (a tie keeps it)")
        let neighbour = d.candidates.map { maxCornerError($0.quad, b) }.min() ?? .infinity
        #expect(neighbour < 1.5, "the neighbour placed by the look is kept: corner error \(neighbour) px")
    }
}

/// Learned regions first (`learnedFirst`): two prints 80 px apart whose painted interiors run together into one
/// region (the segmenter joined them): the learned pass places one outline around both, its long sides unsupported
/// across the gap (confidence under 0.9). The classic passes find each print with full support and replace it (each
/// within 1.5 px); with `outsupportMargin` beyond 1 they may not, and the joined outline is all there is.
@Test func aBetterSupportedClassicOutlineReplacesAJoinedLearnedOne() {
    let a = placedQuad(centre: PixelPoint(220, 240), widthPx: 140, heightPx: 190, angleDegrees: 0)
    let b = placedQuad(centre: PixelPoint(440, 240), widthPx: 140, heightPx: 190, angleDegrees: 0)
    let frame = twoPrintsOnATealTable(a, 140, 190, b, 140, 190)
    let joined = Quad(a[0], b[1], b[2], a[3])
    func found(margin: Double) -> [Observation] {
        let segmenter = PaintedSegmenter(geometry: frame.geometry, interiorQuads: [joined], edgeQuads: [joined])
        let detector = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .both)
        detector.learnedParameters.learnedFirst = true
        detector.outsupportMargin = margin
        return Array(detector.detect(frame))
    }
    let replaced = found(margin: 0.1)
    #expect(replaced.count == 2, "\(replaced)")
    for truth in [a, b] {
        let best = replaced.map { maxCornerError($0.quad, truth) }.min() ?? .infinity
        #expect(best < 1.5, "corner error \(best) px for \(truth)")
    }
    let kept = found(margin: 1.01)
    #expect(kept.count == 1 && kept.allSatisfy { $0.confidence < 0.9 }, "\(kept)")
    #expect(kept.map { maxCornerError($0.quad, joined) }.min() ?? .infinity < 3, "\(kept)")
}
