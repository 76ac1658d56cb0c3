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
    let frame = renderFrame(widthPx: 640, heightPx: 480, table: (150, 120, 136), textureAmplitude: 12,
                            photos: [(photo, truth)], noiseSigma: 1.5)
    // Side 3 (corner 3 to corner 0, the left side) 14 px out on the table, along its outward normal.
    let left = truth[0] - truth[1]
    let outward = left / (left * left).sum().squareRoot()
    var offTable = truth
    offTable[3] = truth[3] + outward * 14
    offTable[0] = truth[0] + outward * 14
    let sampler = PlaneSampler(frame)
    let refiner = EdgeRefiner()
    let repaired = refiner.repairSide(offTable, side: 3, currentSupport: 0.2, in: sampler, maximumOffsetPx: 2,
                                      inwardPx: 24)
    #expect(repaired != nil)
    if let repaired { #expect(maxCornerError(repaired, truth) < 1.5, "\(repaired) vs \(truth)") }
    #expect(refiner.repairSide(offTable, side: 3, currentSupport: 0.2, in: sampler, maximumOffsetPx: 2) == nil)
}
