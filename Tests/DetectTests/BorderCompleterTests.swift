import ColorcamCore
import Testing

@testable import Detect

/// A white-bordered print on a light table, found along the paper's edge on two sides and along the picture's on the
/// other two: the completer moves those two out to the paper's edge; a print without a border is left alone.
@Test(arguments: [0.0, 17.0])
func borderCompleterMovesPictureSidesToThePaperEdge(angleDegrees: Double) {
    let outer = placedQuad(centre: PixelPoint(320, 240), widthPx: 240, heightPx: 180, angleDegrees: angleDegrees)
    let photo = SyntheticPhoto(widthPx: 240, heightPx: 180, seed: 9, colour: false, borderFraction: 0.06)
    let border = Double(Int(0.06 * 240))  // px, as SyntheticPhoto rounds it
    let frame = renderFrame(
        widthPx: 640, heightPx: 480, table: (200, 126, 132), textureAmplitude: 3,
        photos: [(photo, outer)], noiseSigma: 1.5)
    // The picture's edge on sides 2 (bottom) and 3 (left): move them in by the border along their inward normals.
    var mixed = outer
    let inBottom = (outer[0] - outer[3]) / ((outer[0] - outer[3]) * (outer[0] - outer[3])).sum().squareRoot()
    let inLeft = (outer[1] - outer[0]) / ((outer[1] - outer[0]) * (outer[1] - outer[0])).sum().squareRoot()
    mixed[3] = outer[3] + inBottom * border + inLeft * border
    mixed[2] = outer[2] + inBottom * border
    mixed[0] = outer[0] + inLeft * border
    let completed = BorderCompleter().complete(mixed, in: PlaneSampler(frame))
    #expect(completed != nil)
    if let completed { #expect(maxCornerError(completed, outer) < 1.5, "\(completed) vs \(outer)") }

    let plain = SyntheticPhoto(widthPx: 240, heightPx: 180, seed: 9, colour: false)
    let plainFrame = renderFrame(
        widthPx: 640, heightPx: 480, table: (200, 126, 132), textureAmplitude: 3,
        photos: [(plain, outer)], noiseSigma: 1.5)
    #expect(BorderCompleter().complete(outer, in: PlaneSampler(plainFrame)) == nil)
}
