import ColorcamCore
import Foundation
import Testing

@testable import Detect

/// A rectangle's hull on a grid, clockwise on screen: six vertices per side, every other one 0.3 units inside the
/// side (a hull of cell centres is a staircase's). With `cutCorner`, that corner is cut off: the side before it ends
/// 70 % of the way along, the side after it starts 35 % of the way along.
private func gridHull(_ rectangle: Quad, cutCorner: Int?) -> [PixelPoint] {
    var points: [PixelPoint] = []
    for side in 0..<4 {
        let a = rectangle[side], b = rectangle[side + 1]
        let d = b - a, outward = PixelPoint(d.y, -d.x) / (d * d).sum().squareRoot()
        let start = side == cutCorner ? 0.35 : 0.0
        let end = cutCorner.map { side == ($0 + 3) % 4 } == true ? 0.7 : 1.0
        for k in 0..<6 {
            points.append(a + d * (start + (end - start) * Double(k) / 6) - outward * (k % 2 == 1 ? 0.3 : 0))
        }
        if end < 1 { points.append(a + d * end) }
    }
    return points
}

/// A print whose corner is hidden (its hull a pentagon): the smallest enclosing quad on the hull's sides puts the
/// hidden corner back within half a cell; the largest inscribed quad (`QuadFitter`) cuts across the print there.
@Test func theEnclosingQuadPutsAHiddenCornerBack() {
    let rectangle = placedQuad(centre: PixelPoint(40, 30), widthPx: 40, heightPx: 28, angleDegrees: 12)
    for cut in 0..<4 {
        let hull = gridHull(rectangle, cutCorner: cut)
        var enclosing = EnclosingQuadFitter()
        guard let fitted = enclosing.fit(hull[...]) else {
            Issue.record("no enclosing quad with corner \(cut) cut"); continue
        }
        #expect(maxCornerError(fitted, rectangle) < 0.5, "corner \(cut) cut: \(fitted)")
        var inscribed = QuadFitter()
        let largest = inscribed.fit(hull[...])!
        #expect(maxCornerError(largest, rectangle) > 5, "corner \(cut) cut: \(largest)")
    }
}

/// With no corner hidden, the enclosing quad is the rectangle (its sides through the hull's outermost vertices).
@Test func anUncutHullsEnclosingQuadIsItsRectangle() {
    let rectangle = placedQuad(centre: PixelPoint(50, 50), widthPx: 30, heightPx: 30, angleDegrees: -25)
    var enclosing = EnclosingQuadFitter()
    let fitted = enclosing.fit(gridHull(rectangle, cutCorner: nil)[...])
    #expect(fitted.map { maxCornerError($0, rectangle) < 0.1 } == true, "\(String(describing: fitted))")
}

/// A hull with fewer than four straight stretches (a triangle) has no enclosing quad on its sides.
@Test func aTriangleHasNoEnclosingQuad() {
    var enclosing = EnclosingQuadFitter()
    let triangle = [PixelPoint(0, 0), PixelPoint(10, 0), PixelPoint(20, 0), PixelPoint(10, 10), PixelPoint(5, 5)]
    #expect(enclosing.fit(triangle[...]) == nil)
}

/// A print whose corner lies under something the segmenter sees as another paper (interior, behind an edge line):
/// the print's region is its interior less that corner, a pentagon, and no outline is placed from its inscribed
/// quad; from the enclosing quad it is placed within 1.5 px, at two rotations. (The frame shows the whole print;
/// the maps alone hide the corner. 30 % of two sides hidden: the inscribed quad's outline fails the coarse shape
/// check.)
@Test func aPrintWithACornerUnderAnotherIsPlacedFromItsEnclosingQuad() {
    for angle in [0.0, 20.0] {
        let print = placedQuad(centre: PixelPoint(300, 240), widthPx: 220, heightPx: 160, angleDegrees: angle)
        let small = placedQuad(centre: PixelPoint(520, 400), widthPx: 60, heightPx: 50, angleDegrees: 0)
        let frame = twoPrintsOnATealTable(print, 220, 160, small, 60, 50)
        // The print's interior less its corner 2 (30 % of the sides either side), as two quads; the cover over it.
        let a = print[1] + (print[2] - print[1]) * 0.7, b = print[2] + (print[3] - print[2]) * 0.3
        let cover = placedQuad(centre: print[2], widthPx: 145, heightPx: 106, angleDegrees: angle + 30)
        func error(enclosing: Bool) -> Double {
            let segmenter = PaintedSegmenter(
                geometry: frame.geometry,
                interiorQuads: [Quad(print[0], print[1], a, print[3]), Quad(print[0], a, b, print[3]), cover, small],
                edgeQuads: [cover])
            let detector = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .learned)
            detector.learnedParameters.usesEnclosingQuads = enclosing
            detector.learnedParameters.usesCloseLook = false
            return detector.detect(frame).map { maxCornerError($0.quad, print) }.min() ?? .infinity
        }
        #expect(error(enclosing: false) > 5, "at \(angle)°")
        #expect(error(enclosing: true) < 1.5, "at \(angle)°")
    }
}

/// A white-bordered print on a table whose outline an earlier pass placed on the picture inside the border: the
/// learned region (the whole paper to the segmenter) is placed on the paper's edge and replaces the picture's
/// outline, within 1.5 px; without `replacesEnclosedOutlines` it is a duplicate and the picture's outline stays.
@Test(arguments: [0.0, 17.0])
func aLearnedOutlineAroundAnEarlierOneInsideItReplacesIt(angleDegrees: Double) {
    let (outer, picture, frame) = borderedPrintScene(
        centre: PixelPoint(320, 240), widthPx: 240, heightPx: 180, angleDegrees: angleDegrees, borderFraction: 0.08,
        seed: 9, tableLuma: 200)
    func placed(replacing: Bool) -> [Quad] {
        let segmenter = PaintedSegmenter(geometry: frame.geometry, interiorQuads: [outer], edgeQuads: [])
        let detector = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .learned)
        detector.learnedParameters.replacesEnclosedOutlines = replacing
        detector.learnedParameters.usesCloseLook = false
        detector.candidates = [Observation(quad: picture.canonicallyOrdered(), confidence: 1, aspectRatio: 1.4)]
        let maps = segmenter.segment(frame)
        detector.extractLearnedRegions(maps, minimumSidePx: 20)
        detector.considerLearnedRegions(maps, frame: frame, sampler: PlaneSampler(frame), minimumSidePx: 20)
        return detector.candidates.map(\.quad)
    }
    let replaced = placed(replacing: true), kept = placed(replacing: false)
    #expect(replaced.count == 1 && kept.count == 1)
    if let quad = replaced.first { #expect(maxCornerError(quad, outer) < 1.5, "\(quad) vs \(outer)") }
    if let quad = kept.first { #expect(maxCornerError(quad, picture) < 0.01) }
}
