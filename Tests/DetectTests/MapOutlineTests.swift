import ColorcamCore
import Testing

@testable import Detect

/// A 200 × 150 px print at 17° with some perspective on a 640 × 480 frame, and the maps painted from it.
private func paintedPrint() -> (print: Quad, segmenter: PaintedSegmenter, maps: SegmentationMaps) {
    let geometry = FrameGeometry(widthPx: 640, heightPx: 480, chroma: .yuv420(.jpeg))
    let print = placedQuad(centre: PixelPoint(300, 220), widthPx: 200, heightPx: 150, angleDegrees: 17, perspective: 6)
    let segmenter = PaintedSegmenter(geometry: geometry, interiorQuads: [print], edgeQuads: [print])
    return (print, segmenter, segmenter.segment(FrameBuffer(geometry: geometry)))
}

/// The interior map painted from a quad (`PaintedSegmenter`: each cell the fraction of it inside) falls through 0.5
/// on the quad's sides, so the map outline found from a quad several pixels off — outside it or inside it — is the
/// painted quad to under a pixel; from a quad beyond the search's reach, or on an empty map, there is none.
@Test func theMapOutlineIsWhereThePaintedInteriorFallsThroughOneHalf() throws {
    let (print, segmenter, maps) = paintedPrint()
    let geometry = FrameGeometry(widthPx: 640, heightPx: 480, chroma: .yuv420(.jpeg))
    var outline = MapOutline()
    for offsetPx in [5.0, -4.0] {
        let start = try #require(print.offsettingSides(byPx: offsetPx))
        let fitted = outline.fit(start, maps: maps, grid: segmenter.grid)
        let found = try #require(fitted, "from \(offsetPx) px")
        #expect(maxCornerError(found, print) < 0.75, "from \(offsetPx) px: \(found)")
    }
    let far = try #require(print.offsettingSides(byPx: 20))
    let beyondReach = outline.fit(far, maps: maps, grid: segmenter.grid)
    #expect(beyondReach == nil, "the sides lie beyond the 3-cell reach")
    let empty = PaintedSegmenter(geometry: geometry, interiorQuads: [], edgeQuads: [])
    let onEmpty = outline.fit(print, maps: empty.segment(FrameBuffer(geometry: geometry)), grid: empty.grid)
    #expect(onEmpty == nil)
}

/// A candidate whose outline the map places elsewhere — one side taken 7 px out on the table — moves onto the map's
/// outline on the paper's edges; a candidate where the map agrees is left exactly as it was; and where the map shows
/// a print the frame does not (no edges along the map's outline) nothing moves. Off (`usesMapOutlines`), nothing
/// moves either.
@Test func aCandidateTheMapPlacesElsewhereMovesOntoTheMapsOutlineOnItsEdges() throws {
    let (frame, a, b) = twoPrintsOnADarkTable()
    func detector(painting quads: [Quad]) -> (PhotoDetector, SegmentationMaps) {
        let segmenter = PaintedSegmenter(geometry: frame.geometry, interiorQuads: quads, edgeQuads: quads)
        return (PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .learned), segmenter.segment(frame))
    }
    // Side 1 (corner 1 to corner 2) of `a` moved 7 px outwards.
    var wide = a
    let u = (a[2] - a[1]) / ((a[2] - a[1]) * (a[2] - a[1])).sum().squareRoot()
    wide[1] += PixelPoint(u.y, -u.x) * 7
    wide[2] += PixelPoint(u.y, -u.x) * 7
    let exactB = Observation(quad: b.canonicallyOrdered(), confidence: 0.9, aspectRatio: 0.74)
    let (moving, maps) = detector(painting: [a, b])
    moving.candidates = [Observation(quad: wide.canonicallyOrdered(), confidence: 0.9, aspectRatio: 0.75), exactB]
    moving.movingCandidatesTheMapPlacesElsewhere(maps, sampler: PlaneSampler(frame), minimumSidePx: 8)
    #expect(maxCornerError(moving.candidates[0].quad, a) < 1.5, "\(moving.candidates[0].quad)")
    #expect(moving.candidates[1] == exactB, "the map agrees: unchanged")

    // The map shows `a` 30 px to the right, where the frame has only table: no edges there, the candidate stays.
    let shifted = Quad(
        a[0] + PixelPoint(30, 0), a[1] + PixelPoint(30, 0), a[2] + PixelPoint(30, 0), a[3] + PixelPoint(30, 0))
    let (blind, blindMaps) = detector(painting: [shifted])
    let onA = Observation(quad: a.canonicallyOrdered(), confidence: 0.9, aspectRatio: 0.75)
    blind.candidates = [onA]
    blind.movingCandidatesTheMapPlacesElsewhere(blindMaps, sampler: PlaneSampler(frame), minimumSidePx: 8)
    #expect(blind.candidates == [onA])
}

/// A print with a strip of white paper lying 4 px beside one side on a dark table: the edge search takes the strip's
/// outer edge (the classic passes) or its inner edge (a learned region) for the print's side, 10 and 4 px off; with
/// map outlines (maps painted from the print alone) the print is placed on its own edge, in both modes.
@Test func theMapKeepsAStripBesideAPrintOutOfItsOutline() {
    let paper = placedQuad(centre: PixelPoint(300, 240), widthPx: 200, heightPx: 150, angleDegrees: 8)
    let u = (paper[2] - paper[1]) / ((paper[2] - paper[1]) * (paper[2] - paper[1])).sum().squareRoot()
    let out = PixelPoint(u.y, -u.x)
    let strip = Quad(paper[1] + out * 4, paper[1] + out * 10, paper[2] + out * 10, paper[2] + out * 4)
    let frame = renderFrame(
        widthPx: 640, heightPx: 480, table: (50, 125, 130),
        photos: [
            (SyntheticPhoto(widthPx: 200, heightPx: 150, seed: 3), paper),
            (SyntheticPhoto(widthPx: 6, heightPx: 150, seed: 1, borderFraction: 1), strip)
        ], noiseSigma: 1)
    for mode in [DetectorMode.both, .learned] {
        var errorPx: [Bool: Double] = [:]
        for mapOutlines in [false, true] {
            let segmenter = PaintedSegmenter(geometry: frame.geometry, interiorQuads: [paper], edgeQuads: [paper])
            let detector = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: mode)
            detector.learnedParameters.usesMapOutlines = mapOutlines
            let found = detector.detect(frame)
            #expect(found.count == 1, "\(mode), map outlines \(mapOutlines): \(found)")
            errorPx[mapOutlines] = found.map { maxCornerError($0.quad, paper) }.min() ?? .infinity
        }
        #expect(errorPx[false]! > 3, "\(mode): without map outlines the strip's edge is taken (\(errorPx[false]!) px)")
        #expect(errorPx[true]! < 1, "\(mode): with them the print's own (\(errorPx[true]!) px)")
    }
}

/// Read on the edge map (`.edgeRidge`), the outline found from a quad several pixels off is the painted quad's to
/// within the map's resolution; a reach of 6 cells finds it from 16 px out, where the default 3 cells find nothing.
@Test func theEdgeRidgeOutlineIsThePaintedEdgeLine() throws {
    let (print, segmenter, maps) = paintedPrint()
    var outline = MapOutline()
    for offsetPx in [5.0, -4.0] {
        let start = try #require(print.offsettingSides(byPx: offsetPx))
        let fitted = outline.fit(start, maps: maps, grid: segmenter.grid, reading: .edgeRidge)
        let found = try #require(fitted, "from \(offsetPx) px")
        #expect(maxCornerError(found, print) < 1.5, "from \(offsetPx) px: \(found)")
    }
    let far = try #require(print.offsettingSides(byPx: 16))
    let beyondReach = outline.fit(far, maps: maps, grid: segmenter.grid, reading: .edgeRidge)
    #expect(beyondReach == nil, "the sides lie beyond the 3-cell reach")
    let fitted = outline.fit(far, maps: maps, grid: segmenter.grid, reading: .edgeRidge, reachCells: 6)
    let reached = try #require(fitted)
    #expect(maxCornerError(reached, print) < 1.5, "\(reached)")
}

/// A print the frame does not show at all (the table's own tone, no edge anywhere) that the segmenter sees — interior
/// and edge painted from it — is placed on the maps alone, in `learned` and `both` modes, with
/// `mapsAloneConfidence`; off (`placesOnMapsAlone`), it is not found; and where the maps show paper around the
/// outline too (a larger interior painted under it) it is not placed either.
@Test func aPrintOnlyTheSegmenterSeesIsPlacedOnTheMapsAlone() throws {
    let frame = renderFrame(widthPx: 640, heightPx: 480, table: (120, 128, 128), photos: [], noiseSigma: 1)
    let print = placedQuad(centre: PixelPoint(320, 240), widthPx: 180, heightPx: 130, angleDegrees: 25, perspective: 4)
    let table = try #require(print.offsettingSides(byPx: 20))
    for mode in [DetectorMode.learned, .both] {
        for alone in [true, false] {
            let segmenter = PaintedSegmenter(geometry: frame.geometry, interiorQuads: [print], edgeQuads: [print])
            let detector = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: mode)
            detector.learnedParameters.placesOnMapsAlone = alone
            let found = detector.detect(frame)
            guard alone else {
                #expect(found.isEmpty, "\(mode), off: \(found)")
                continue
            }
            #expect(found.count == 1, "\(mode): \(found)")
            let observation = try #require(found.first)
            #expect(maxCornerError(observation.quad, print) < 1.5, "\(mode): \(observation.quad)")
            #expect(observation.confidence == detector.learnedParameters.mapsAloneConfidence)
        }
        let around = PaintedSegmenter(geometry: frame.geometry, interiorQuads: [table, print], edgeQuads: [print])
        let onPaper = PhotoDetector(geometry: frame.geometry, segmenter: around, mode: mode).detect(frame)
        #expect(onPaper.isEmpty, "\(mode): paper all around: \(onPaper)")
    }
}
