import ColorcamCore
import Testing

@testable import Detect

/// A white-bordered print (240 × 180, border 6 %) on a light table at `angleDegrees`: the frame, the paper's outline,
/// and an outline found along the paper's edge on sides 0 and 1 and along the picture's on sides 2 (bottom) and 3
/// (left).
private func borderedPrintOnALightTable(_ angleDegrees: Double) -> (FrameBuffer, Quad, Quad) {
    let outer = placedQuad(centre: PixelPoint(320, 240), widthPx: 240, heightPx: 180, angleDegrees: angleDegrees)
    let photo = SyntheticPhoto(widthPx: 240, heightPx: 180, seed: 9, colour: false, borderFraction: 0.06)
    let border = Double(Int(0.06 * 240))  // px, as SyntheticPhoto rounds it
    let frame = renderFrame(
        widthPx: 640, heightPx: 480, table: (200, 126, 132), textureAmplitude: 3,
        photos: [(photo, outer)], noiseSigma: 1.5)
    // Sides 2 and 3 moved in by the border along their inward normals.
    var mixed = outer
    let inBottom = (outer[0] - outer[3]) / ((outer[0] - outer[3]) * (outer[0] - outer[3])).sum().squareRoot()
    let inLeft = (outer[1] - outer[0]) / ((outer[1] - outer[0]) * (outer[1] - outer[0])).sum().squareRoot()
    mixed[3] = outer[3] + inBottom * border + inLeft * border
    mixed[2] = outer[2] + inBottom * border
    mixed[0] = outer[0] + inLeft * border
    return (frame, outer, mixed)
}

/// A white-bordered print on a light table, found along the paper's edge on two sides and along the picture's on the
/// other two: the completer moves those two out to the paper's edge; a print without a border is left alone.
@Test(arguments: [0.0, 17.0])
func borderCompleterMovesPictureSidesToThePaperEdge(angleDegrees: Double) {
    let (frame, outer, mixed) = borderedPrintOnALightTable(angleDegrees)
    let completed = BorderCompleter().complete(mixed, in: PlaneSampler(frame))
    #expect(completed != nil)
    if let completed { #expect(maxCornerError(completed, outer) < 1.5, "\(completed) vs \(outer)") }

    let plain = SyntheticPhoto(widthPx: 240, heightPx: 180, seed: 9, colour: false)
    let plainFrame = renderFrame(
        widthPx: 640, heightPx: 480, table: (200, 126, 132), textureAmplitude: 3,
        photos: [(plain, outer)], noiseSigma: 1.5)
    #expect(BorderCompleter().complete(outer, in: PlaneSampler(plainFrame)) == nil)
}

/// An outline on the picture's edge on two sides and the paper's on the other two shares those sides (and a corner)
/// with the paper's outline: it is the picture inside the paper's white border (a tracker following the paper must
/// not move to it), though its corners are not strictly inside. An outline 6 px beyond the paper is not.
@Test(arguments: [0.0, 17.0])
func anOutlineSharingSidesWithThePaperIsThePictureInsideItsBorder(angleDegrees: Double) {
    let (frame, outer, mixed) = borderedPrintOnALightTable(angleDegrees)
    let detector = PhotoDetector(geometry: frame.geometry)
    let paper = outer.canonicallyOrdered()
    #expect(detector.isPictureInsideBorder(mixed.canonicallyOrdered(), of: paper, in: frame))
    let beyond = outer.offsettingSides(byPx: 6)!.canonicallyOrdered()
    #expect(!detector.isPictureInsideBorder(beyond, of: paper, in: frame))
}
