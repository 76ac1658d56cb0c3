import ColorcamCore
import Testing

@testable import Detect

/// A side found on the table outside the print (the coarse region took in a strip of textured table, so the search
/// near it found only texture): the repair, allowed to look inwards, moves it onto the paper's edge; looking only
/// outwards (as for a side cut across a lost corner) it finds nothing better.
@Test(arguments: [0.0, 11.0])
func repairMovesASideOnTheTableInToThePaperEdge(angleDegrees: Double) {
    let truth = placedQuad(centre: PixelPoint(320, 240), widthPx: 220, heightPx: 170, angleDegrees: angleDegrees)
    let photo = SyntheticPhoto(widthPx: 220, heightPx: 170, seed: 4)
    let frame = renderFrame(
        widthPx: 640, heightPx: 480, table: (150, 120, 136), textureAmplitude: 12,
        photos: [(photo, truth)], noiseSigma: 1.5)
    // Side 3 (corner 3 to corner 0, the left side) 14 px out on the table, along its outward normal.
    let left = truth[0] - truth[1]
    let outward = left / (left * left).sum().squareRoot()
    var offTable = truth
    offTable[3] = truth[3] + outward * 14
    offTable[0] = truth[0] + outward * 14
    let sampler = PlaneSampler(frame)
    let refiner = EdgeRefiner()
    let repaired = refiner.repairSide(
        offTable, side: 3, currentSupport: 0.2, in: sampler, maximumOffsetPx: 2,
        inwardPx: 24)
    #expect(repaired != nil)
    if let repaired { #expect(maxCornerError(repaired, truth) < 1.5, "\(repaired) vs \(truth)") }
    #expect(refiner.repairSide(offTable, side: 3, currentSupport: 0.2, in: sampler, maximumOffsetPx: 2) == nil)
}

/// A print casting a soft drop shadow on a lighter table: outwards from the paper's edge the luma falls into the
/// shadow and rises again at its blurred far side, a peak nearly as strong as the paper's edge and further out. The
/// refinement keeps the paper's edge; without the shadow test (`shadowValleyMaxPx` 0) it takes the far side. With
/// `brightHalf` the picture is lighter in two opposite quarters, so along half of each side, where the paper's edge
/// is strong enough that the far side is no clear peak: the outermost peaks then lie on two lines, half on each.
@Test(arguments: [(0.0, false), (9.0, false), (0.0, true), (9.0, true)])
func refineTakesThePaperEdgeNotItsShadowsFarSide(angleDegrees: Double, brightHalf: Bool) {
    let truth = placedQuad(centre: PixelPoint(320, 240), widthPx: 200, heightPx: 150, angleDegrees: angleDegrees)
    var photo = SyntheticPhoto(widthPx: 200, heightPx: 150, seed: 7, colour: false)
    for y in 0..<150 {
        for x in 0..<200 { photo.luma[y * 200 + x] = brightHalf && (x < 100) != (y < 75) ? 250 : 172 }
    }
    let frame = renderFrame(
        widthPx: 640, heightPx: 480, table: (212, 124, 134),
        shadow: DropShadow(offsetPx: PixelPoint(3, 3), sigmaPx: 2, strength: 0.35),
        photos: [(photo, truth)], noiseSigma: 1)
    let sampler = PlaneSampler(frame)
    var refiner = EdgeRefiner()
    let found = refiner.refine(truth, in: sampler, inwardPx: 6, outwardPx: 10)
    #expect(found != nil)
    if let found { #expect(maxCornerError(found.quad, truth) < 1, "\(found.quad) vs \(truth)") }
    refiner.shadowValleyMaxPx = 0
    let outermost = refiner.refine(truth, in: sampler, inwardPx: 6, outwardPx: 10)
    #expect(outermost != nil)
    if let outermost { #expect(maxCornerError(outermost.quad, truth) > 2, "\(outermost.quad) vs \(truth)") }
}

/// A dark stripe just inside the picture's edge (a black frame line printed on the photo) on a light table without
/// a shadow: the same fall-then-rise, but far darker than any shadow a flat print casts, so the paper's edge, the
/// outer peak, stays.
@Test
func refineKeepsThePaperEdgeOutsideADarkStripeInThePicture() {
    let truth = placedQuad(centre: PixelPoint(320, 240), widthPx: 200, heightPx: 150, angleDegrees: 5)
    var photo = SyntheticPhoto(widthPx: 200, heightPx: 150, seed: 7, colour: false)
    for y in 0..<150 {
        for x in 0..<200 {
            let margin = min(min(x, y), min(199 - x, 149 - y))
            photo.luma[y * 200 + x] = margin < 4 ? 30 : 180
        }
    }
    let frame = renderFrame(
        widthPx: 640, heightPx: 480, table: (212, 124, 134), photos: [(photo, truth)],
        noiseSigma: 1)
    var refiner = EdgeRefiner()
    let found = refiner.refine(truth, in: PlaneSampler(frame), inwardPx: 8, outwardPx: 6)
    #expect(found != nil)
    if let found { #expect(maxCornerError(found.quad, truth) < 1, "\(found.quad) vs \(truth)") }
}
