import ColorcamCore
import Testing

@testable import Detect

/// A segmenter test double: maps painted from known quads the way the trainer labels them
/// (`tools/scenes/dr_render.py` `targets`): interior = the fraction of the cell inside one of `interiorQuads`; edge =
/// 1.5 × the fraction of the cell within 0.75 cells of one of `edgeQuads`' outlines (a 1.5-cell line centred on
/// it), at most 1; a cell within 0.75 cells of one of `faintEdgeQuads`' outlines at one sample or more has edge at
/// least 0.4 (a line the foreground's 0.5 cut does not see). Fractions from 4×4 samples per cell. The maps are
/// stored with a padded row stride, as a model's tensor is. With `cornerQuads`, corner planes too: a cell whose
/// centre lies in one of the `paint` quads predicts that entry's `outline` (in cells, from the cell's centre). With
/// `closeLook`, it takes close looks on that window grid, painted the same way from that entry's quads at the window
/// asked for (`closeLookOrigins` lists them).
final class PaintedSegmenter: PrintSegmenter {
    let grid: SegmentationGrid
    let rowStride: Int
    private let interior: UnsafeMutablePointer<Float>
    private let edge: UnsafeMutablePointer<Float>
    private let corners: UnsafeMutablePointer<Float>?
    private(set) var calls = 0
    let closeLookGrid: SegmentationGrid?
    private let closeQuads: (interior: [Quad], edge: [Quad])
    private let closeInterior: UnsafeMutablePointer<Float>
    private let closeEdge: UnsafeMutablePointer<Float>
    private(set) var closeLookOrigins: [(x: Int, y: Int)] = []

    init(
        geometry: FrameGeometry, interiorQuads: [Quad], edgeQuads: [Quad], faintEdgeQuads: [Quad] = [],
        cornerQuads: [(paint: Quad, outline: Quad)]? = nil,
        closeLook: (grid: SegmentationGrid, interiorQuads: [Quad], edgeQuads: [Quad])? = nil
    ) {
        grid = SegmentationGrid(geometry: geometry)
        rowStride = grid.widthCells + 3
        let count = rowStride * grid.heightCells
        interior = .allocate(capacity: count)
        edge = .allocate(capacity: count)
        closeLookGrid = closeLook?.grid
        closeQuads = (closeLook?.interiorQuads ?? [], closeLook?.edgeQuads ?? [])
        closeInterior = .allocate(capacity: closeLook?.grid.cellCount ?? 0)
        closeEdge = .allocate(capacity: closeLook?.grid.cellCount ?? 0)
        PaintedSegmenter.paint(
            grid, rowStride: rowStride, originPx: .zero, interiorQuads: interiorQuads, edgeQuads: edgeQuads,
            faintEdgeQuads: faintEdgeQuads, interior: interior, edge: edge)
        let c = Double(grid.cellPx)
        guard let cornerQuads else { corners = nil; return }
        corners = .allocate(capacity: 8 * count)
        corners!.initialize(repeating: 0, count: 8 * count)
        for j in 0..<grid.heightCells {
            for i in 0..<grid.widthCells {
                let centre = PixelPoint((Double(i) + 0.5) * c, (Double(j) + 0.5) * c)
                guard let owner = cornerQuads.last(where: { $0.paint.contains(centre) }) else { continue }
                for k in 0..<4 {
                    let d = (owner.outline[k] - centre) * (1 / c)
                    corners![2 * k * count + j * rowStride + i] = Float(d.x)
                    corners![(2 * k + 1) * count + j * rowStride + i] = Float(d.y)
                }
            }
        }
    }

    deinit {
        interior.deallocate()
        edge.deallocate()
        corners?.deallocate()
        closeInterior.deallocate()
        closeEdge.deallocate()
    }

    /// Paints `grid`'s maps (cells from frame pixel `originPx`, rows `rowStride` apart) from the quads.
    private static func paint(
        _ grid: SegmentationGrid, rowStride: Int, originPx: PixelPoint, interiorQuads: [Quad], edgeQuads: [Quad],
        faintEdgeQuads: [Quad] = [], interior: UnsafeMutablePointer<Float>, edge: UnsafeMutablePointer<Float>
    ) {
        let c = Double(grid.cellPx)
        func distanceToOutline(_ p: PixelPoint, _ quad: Quad) -> Double {
            (0..<4).map { k -> Double in
                let a = quad[k], d = quad[k + 1] - a
                let t = min(1, max(0, ((p - a) * d).sum() / (d * d).sum()))
                let q = a + d * t - p
                return (q * q).sum().squareRoot()
            }.min()!
        }
        interior.initialize(repeating: 0, count: rowStride * grid.heightCells)
        edge.initialize(repeating: 0, count: rowStride * grid.heightCells)
        for j in 0..<grid.heightCells {
            for i in 0..<grid.widthCells {
                var inside = 0, near = 0, nearFaint = 0
                for k in 0..<4 {
                    for l in 0..<4 {
                        let p =
                            originPx
                            + PixelPoint(
                                (Double(i) + (Double(k) + 0.5) / 4) * c, (Double(j) + (Double(l) + 0.5) / 4) * c)
                        if interiorQuads.contains(where: { $0.contains(p) }) { inside += 1 }
                        if edgeQuads.contains(where: { distanceToOutline(p, $0) <= 0.75 * c }) { near += 1 }
                        if faintEdgeQuads.contains(where: { distanceToOutline(p, $0) <= 0.75 * c }) { nearFaint += 1 }
                    }
                }
                interior[j * rowStride + i] = Float(inside) / 16
                edge[j * rowStride + i] = max(min(1, 1.5 * Float(near) / 16), nearFaint > 0 ? 0.4 : 0)
            }
        }
    }

    func segment(_ frame: FrameBuffer, windowOriginXPx: Int, windowOriginYPx: Int) -> SegmentationMaps {
        let window = closeLookGrid!
        closeLookOrigins.append((windowOriginXPx, windowOriginYPx))
        PaintedSegmenter.paint(
            window, rowStride: window.widthCells,
            originPx: PixelPoint(Double(windowOriginXPx), Double(windowOriginYPx)),
            interiorQuads: closeQuads.interior, edgeQuads: closeQuads.edge, interior: closeInterior, edge: closeEdge)
        return SegmentationMaps(interior: closeInterior, edge: closeEdge, rowStride: window.widthCells)
    }

    func segment(_ frame: FrameBuffer) -> SegmentationMaps {
        calls += 1
        return SegmentationMaps(
            interior: interior, edge: edge, rowStride: rowStride, corners: corners.map { UnsafePointer($0) },
            planeStride: rowStride * grid.heightCells)
    }
}

/// The quad grown by `px` on every side (for painting an interior wider than the print).
private func grown(_ quad: Quad, _ px: Double) -> Quad { quad.offsettingSides(byPx: px)! }

@Test(arguments: [
    (640, 480, 4, 160, 120, 160, 120), (1280, 720, 6, 213, 120, 216, 120), (100, 50, 2, 50, 25, 56, 32),
    (641, 481, 4, 160, 120, 160, 120), (6, 6, 2, 3, 3, 8, 8)
])
func segmentationGridFollowsTheCoarseFactor(size: (Int, Int, Int, Int, Int, Int, Int)) {
    let grid = SegmentationGrid(geometry: FrameGeometry(widthPx: size.0, heightPx: size.1, chroma: .yuv420(.jpeg)))
    #expect(grid.cellPx == size.2)
    #expect(grid.widthCells == size.3 && grid.heightCells == size.4)
    #expect(grid.paddedWidthCells == size.5 && grid.paddedHeightCells == size.6)
}

@Test func offsettingSidesMovesEachSideAlongItsNormal() throws {
    let square = Quad(PixelPoint(10, 10), PixelPoint(30, 10), PixelPoint(30, 30), PixelPoint(10, 30))
    let out = try #require(square.offsettingSides(byPx: 2))
    #expect(
        maxCornerError(out, Quad(PixelPoint(8, 8), PixelPoint(32, 8), PixelPoint(32, 32), PixelPoint(8, 32))) < 1e-9)
    // Counter-clockwise corners: still outwards.
    let reversed = Quad(square[3], square[2], square[1], square[0])
    let out2 = try #require(reversed.offsettingSides(byPx: 2))
    #expect(abs(out2.area - 24 * 24) < 1e-9)
    let tilted = placedQuad(centre: PixelPoint(100, 100), widthPx: 60, heightPx: 40, angleDegrees: 23)
    let inset = try #require(tilted.offsettingSides(byPx: -3))
    #expect(abs(inset.meanSideLengthsPx.width - 54) < 1e-9 && abs(inset.meanSideLengthsPx.height - 34) < 1e-9)
}

@Test func regionsFromAForegroundMaskAreEightConnectedAndOpened() {
    let w = 40, h = 30
    let extractor = RegionExtractor(widthPx: w, heightPx: h)
    var mask = [UInt8](repeating: 0, count: w * h)
    func fill(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int) {
        for y in y0...y1 { for x in x0...x1 { mask[y * w + x] = 1 } }
    }
    func extract(minimumSidePx: Int, openingRadius: Int) -> [[Int]] {
        mask.withUnsafeBufferPointer {
            extractor.extract(foreground: $0.baseAddress!, minimumSidePx: minimumSidePx, openingRadius: openingRadius)
        }
        return extractor.regions.map { [$0.minX, $0.minY, $0.maxX, $0.maxY, $0.pixelCount] }.sorted { $0[0] < $1[0] }
    }
    fill(2, 2, 12, 10)  // a block …
    fill(13, 11, 20, 18)  // … touching another only at a corner: 8-connected, one region
    fill(25, 3, 36, 25)  // a separate block with a one-cell-thin spur
    fill(37, 14, 38, 14)
    #expect(extract(minimumSidePx: 3, openingRadius: 0) == [[2, 2, 20, 18, 99 + 64], [25, 3, 38, 25, 276 + 2]])
    #expect(
        extract(minimumSidePx: 3, openingRadius: 1) == [[2, 2, 20, 18, 99 + 64], [25, 3, 36, 25, 276]],
        "the opening removes the spur")
    #expect(extract(minimumSidePx: 13, openingRadius: 1) == [[2, 2, 20, 18, 99 + 64]], "under 13 cells wide: dropped")
    // Two blocks joined by a one-cell bridge: one region as they are, two after the opening.
    mask = [UInt8](repeating: 0, count: w * h)
    fill(2, 2, 12, 10)
    fill(16, 2, 24, 10)
    fill(13, 6, 15, 6)
    #expect(extract(minimumSidePx: 3, openingRadius: 0).count == 1)
    #expect(extract(minimumSidePx: 3, openingRadius: 1) == [[2, 2, 12, 10, 99], [16, 2, 24, 10, 81]])
}

/// Two prints on a dark table (as in `findsPrintsOnADarkTableWithSubPixelCorners`), maps painted from their quads:
/// the learned mode places each within 1.5 px from the maps' regions alone, calling the segmenter once per frame.
@Test func learnedModeFindsEachPaintedPrint() {
    let (frame, a, b) = twoPrintsOnADarkTable()
    let segmenter = PaintedSegmenter(geometry: frame.geometry, interiorQuads: [a, b], edgeQuads: [a, b])
    let detector = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .learned)
    let found = detector.detect(frame)
    #expect(segmenter.calls == 1)
    #expect(found.count == 2, "\(found)")
    for truth in [a, b] {
        let best = found.map { maxCornerError($0.quad, truth) }.min() ?? .infinity
        #expect(best < 1.5, "corner error \(best) px for \(truth)")
    }
    // Maps that show no print: the learned mode finds nothing although the classic passes would find both.
    let blind = PaintedSegmenter(geometry: frame.geometry, interiorQuads: [], edgeQuads: [])
    #expect(PhotoDetector(geometry: frame.geometry, segmenter: blind, mode: .learned).detect(frame).isEmpty)
    #expect(PhotoDetector(geometry: frame.geometry).detect(frame).count == 2)
}

/// Two prints 8 px apart whose painted interiors touch (each painted 5 px wider than the print): the edge channel's
/// lines between them make two regions, each placed within 1.5 px. Without the edge channel they are one region,
/// and the two prints are not both found.
@Test func anEdgeLineSeparatesPrintsWhoseInteriorsTouch() {
    let a = placedQuad(centre: PixelPoint(200, 240), widthPx: 180, heightPx: 140, angleDegrees: 3)
    let b = placedQuad(centre: PixelPoint(388, 250), widthPx: 180, heightPx: 150, angleDegrees: 3)
    let frame = twoPrintsOnATealTable(a, 180, 140, b, 180, 150)
    func found(edges: [Quad]) -> [Observation] {
        let segmenter = PaintedSegmenter(
            geometry: frame.geometry, interiorQuads: [grown(a, 5), grown(b, 5)],
            edgeQuads: edges)
        return Array(PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .learned).detect(frame))
    }
    let separated = found(edges: [a, b])
    #expect(separated.count == 2, "\(separated)")
    expectEachPlaced([a, b], in: separated)
    let merged = found(edges: [])
    let bothFound = [a, b].allSatisfy { truth in merged.contains { maxCornerError($0.quad, truth) < 1.5 } }
    #expect(!bothFound, "without edge lines the two interiors are one region: \(merged)")
}

/// Two synthetic pictures (seeds 7 and 8, `aW × aH` and `bW × bH`) placed at `a` and `b` on a plain teal table,
/// 640×480.
func twoPrintsOnATealTable(_ a: Quad, _ aW: Int, _ aH: Int, _ b: Quad, _ bW: Int, _ bH: Int) -> FrameBuffer {
    renderFrame(
        widthPx: 640, heightPx: 480, table: (50, 125, 130),
        photos: [
            (SyntheticPhoto(widthPx: aW, heightPx: aH, seed: 7), a),
            (SyntheticPhoto(widthPx: bW, heightPx: bH, seed: 8), b)
        ], noiseSigma: 1)
}

/// Each of `truths` has an observation in `found` within `px` (largest corner error).
private func expectEachPlaced(
    _ truths: [Quad], in found: [Observation], withinPx px: Double = 1.5,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    for truth in truths {
        let best = found.map { maxCornerError($0.quad, truth) }.min() ?? .infinity
        #expect(best < px, "corner error \(best) px for \(truth)", sourceLocation: sourceLocation)
    }
}

/// Two prints that touch, painted exactly and without edge lines, are one region, wider than a print can be, and
/// nothing is found from the maps alone; with corner planes the region's cells vote for two outlines, and both
/// prints are placed within 1.5 px.
@Test func touchingPrintsAreSplitByTheOutlinesTheirCellsPredict() {
    let c = placedQuad(centre: PixelPoint(200, 240), widthPx: 180, heightPx: 140, angleDegrees: 0)
    let d = placedQuad(centre: PixelPoint(380, 240), widthPx: 180, heightPx: 140, angleDegrees: 0)
    let touching = twoPrintsOnATealTable(c, 180, 140, d, 180, 140)
    func detect(_ cornerQuads: [(paint: Quad, outline: Quad)]?) -> [Observation] {
        Array(
            PhotoDetector(
                geometry: touching.geometry,
                segmenter: PaintedSegmenter(
                    geometry: touching.geometry, interiorQuads: [c, d], edgeQuads: [], cornerQuads: cornerQuads),
                mode: .learned
            ).detect(touching))
    }
    #expect(detect(nil).isEmpty, "one region of two prints is no print")
    let split = detect([(c, c), (d, d)])
    #expect(split.count == 2, "\(split)")
    expectEachPlaced([c, d], in: split)
}

/// `classic` with a segmenter gives exactly what a detector without one gives, and never calls the segmenter;
/// `both` finds the same prints, the learned ones first.
@Test func classicModeIsUnchangedAndBothFindsTheSamePrints() {
    let scenes: [(FrameBuffer, [Quad])] = [
        { () -> (FrameBuffer, [Quad]) in
            let q = placedQuad(
                centre: PixelPoint(320, 240), widthPx: 220, heightPx: 170, angleDegrees: 24, perspective: 4)
            return (
                renderFrame(
                    widthPx: 640, heightPx: 480, table: (185, 122, 140), textureAmplitude: 6,
                    photos: [
                        (SyntheticPhoto(widthPx: 220, heightPx: 170, seed: 3, colour: false, borderFraction: 0.07), q)
                    ], noiseSigma: 2), [q]
            )
        }(),
        { () -> (FrameBuffer, [Quad]) in
            let strip = placedQuad(centre: PixelPoint(320, 150), widthPx: 300, heightPx: 90, angleDegrees: 5)
            let small = placedQuad(centre: PixelPoint(150, 370), widthPx: 75, heightPx: 64, angleDegrees: 0)
            let big = placedQuad(centre: PixelPoint(450, 350), widthPx: 150, heightPx: 130, angleDegrees: -12)
            return (
                renderFrame(
                    widthPx: 640, heightPx: 480, table: (50, 128, 128),
                    photos: [
                        (SyntheticPhoto(widthPx: 300, heightPx: 90, seed: 4), strip),
                        (SyntheticPhoto(widthPx: 75, heightPx: 64, seed: 5), small),
                        (SyntheticPhoto(widthPx: 150, heightPx: 130, seed: 6), big)
                    ], noiseSigma: 1), [small, big]
            )
        }(),
        { () -> (FrameBuffer, [Quad]) in
            let q = placedQuad(centre: PixelPoint(150, 110), widthPx: 150, heightPx: 110, angleDegrees: -20)
            return (
                renderFrame(
                    widthPx: 320, heightPx: 240, chroma: .yuv444, table: (70, 110, 150),
                    textureAmplitude: 10, photos: [(SyntheticPhoto(widthPx: 150, heightPx: 110, seed: 9), q)],
                    noiseSigma: 3), [q]
            )
        }()
    ]
    for (frame, prints) in scenes {
        let plain = Array(PhotoDetector(geometry: frame.geometry).detect(frame))
        let segmenter = PaintedSegmenter(geometry: frame.geometry, interiorQuads: prints, edgeQuads: prints)
        let classic = Array(PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .classic).detect(frame))
        #expect(classic == plain)
        #expect(segmenter.calls == 0)
        #expect(plain.count == prints.count, "the scenes are ones the classic detector solves: \(plain)")
        let both = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .both).detect(frame)
        #expect(segmenter.calls == 1)
        #expect(both.count == prints.count, "\(both)")
        for truth in prints {
            let best = both.map { maxCornerError($0.quad, truth) }.min() ?? .infinity
            #expect(best < 1.5, "corner error \(best) px for \(truth)")
        }
    }
    // The default mode follows the segmenter's presence.
    let g = FrameGeometry(widthPx: 320, heightPx: 240, chroma: .yuv420(.jpeg))
    #expect(PhotoDetector(geometry: g).mode == .classic)
    #expect(
        PhotoDetector(geometry: g, segmenter: PaintedSegmenter(geometry: g, interiorQuads: [], edgeQuads: [])).mode
            == .both)
}

/// Two prints overlapping at a corner, painted as one joined interior without edge lines: one region, not a print.
/// Split where it narrows (`splitsJoinedRegions`), both prints are placed within 1.5 px; without the split they
/// are not both found.
@Test func printsJoinedAtACornerAreSplitWhereTheRegionNarrows() {
    let a = placedQuad(centre: PixelPoint(220, 200), widthPx: 200, heightPx: 150, angleDegrees: 0)
    let b = placedQuad(centre: PixelPoint(385, 325), widthPx: 160, heightPx: 120, angleDegrees: 8)
    let frame = twoPrintsOnATealTable(a, 200, 150, b, 160, 120)
    func detect(splitting: Bool) -> [Observation] {
        let segmenter = PaintedSegmenter(geometry: frame.geometry, interiorQuads: [a, b], edgeQuads: [])
        let detector = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .learned)
        detector.learnedParameters.splitsJoinedRegions = splitting
        detector.learnedParameters.usesCloseLook = false
        return Array(detector.detect(frame))
    }
    let split = detect(splitting: true)
    #expect(split.count == 2, "\(split)")
    expectEachPlaced([a, b], in: split)
    let joined = detect(splitting: false)
    #expect(![a, b].allSatisfy { truth in joined.contains { maxCornerError($0.quad, truth) < 1.5 } }, "\(joined)")
}

/// Two prints side by side, the right one 10 px lower, whose interiors the segmenter joins (the line between them
/// faint: edge 0.4, under the foreground's 0.5 cut): the classic pass takes the pair for one print and places an
/// outline across both, inside which the joined learned region is its duplicate. Split where the faint line runs
/// (`RegionSplitter`), the two parts are each better supported than that outline and replace it: both prints are
/// placed within 1.5 px. Without splitting, the outline across both stays and neither print is found.
@Test func anOutlineAcrossTwoPartsOfASplitRegionIsReplacedByThem() {
    let a = placedQuad(centre: PixelPoint(250, 230), widthPx: 130, heightPx: 170, angleDegrees: 0)
    let b = placedQuad(centre: PixelPoint(380, 240), widthPx: 130, heightPx: 170, angleDegrees: 0)
    let frame = twoPrintsOnATealTable(a, 130, 170, b, 130, 170)
    func detect(splitting: Bool) -> (found: [Observation], trace: [String]) {
        let segmenter = PaintedSegmenter(
            geometry: frame.geometry, interiorQuads: [a, b], edgeQuads: [], faintEdgeQuads: [a, b])
        let detector = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .both)
        detector.learnedParameters.splitsJoinedRegions = splitting
        detector.learnedParameters.usesCloseLook = false
        var trace: [String] = []
        detector.trace = { trace.append($0) }
        return (Array(detector.detect(frame)), trace)
    }
    let joined = detect(splitting: false)
    let eitherFound = [a, b].contains { truth in joined.found.contains { maxCornerError($0.quad, truth) < 1.5 } }
    #expect(!eitherFound, "the classic pass's outline across both prints is all there is: \(joined.found)")
    let split = detect(splitting: true)
    #expect(split.trace.contains { $0.hasPrefix("dropped (it spans 2 parts placed as prints)") }, "\(split.trace)")
    #expect(split.found.count == 2, "\(split.found)")
    expectEachPlaced([a, b], in: split.found)
}

/// The same two pictures edge to edge in one line, which is what one print with a line down its picture looks like:
/// the parts of the split region are no better supported than the outline around both (every side of it lies on
/// the paper's edge), so it stays, the only detection — placed by the classic pass (`both`) or by the learned one
/// from the whole region (`learned`).
@Test(arguments: [DetectorMode.both, .learned])
func partsNoBetterSupportedThanTheOutlineAcrossThemLeaveIt(mode: DetectorMode) {
    let a = placedQuad(centre: PixelPoint(255, 240), widthPx: 130, heightPx: 170, angleDegrees: 0)
    let b = placedQuad(centre: PixelPoint(385, 240), widthPx: 130, heightPx: 170, angleDegrees: 0)
    let whole = Quad(a[0], b[1], b[2], a[3])
    let frame = twoPrintsOnATealTable(a, 130, 170, b, 130, 170)
    let segmenter = PaintedSegmenter(
        geometry: frame.geometry, interiorQuads: [whole], edgeQuads: [], faintEdgeQuads: [a, b])
    let detector = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: mode)
    detector.learnedParameters.usesCloseLook = false
    var trace: [String] = []
    detector.trace = { trace.append($0) }
    let found = Array(detector.detect(frame))
    #expect(trace.contains { $0.hasPrefix("region split where it narrows") }, "\(trace)")
    #expect(found.count == 1, "\(found)")
    expectEachPlaced([whole], in: found)
}
