import Foundation

/// How a flat rectangle looks in a camera image: a tilted camera turns a print's right angles into 50°–130° and
/// shortens the side pointing away, so image angles and side lengths say little about the print itself. Given a
/// pinhole camera (principal point, focal length), the quad's corners back-project to rays, the rays scaled to lie in
/// one plane form a parallelogram (Zhang & He, "Whiteboard scanning and image enhancement", 2007), and that
/// parallelogram's angle and side ratio are the print's own, up to the camera's focal length. The focal length of a
/// user's webcam is unknown; `rectangleFit` tries a range of them (and the affine view, no perspective) and keeps
/// the most rectangular reading.
///
/// Units: pixels in, degrees and a short/long ratio out. Pure functions; any thread.
extension Quad {
    /// Focal lengths tried, as fractions of the frame's width: horizontal fields of view from about 90° to 35°
    /// (webcams: 55–90°), a typical webcam's (0.8: 64°) first — it decides where several read as rectangular
    /// (a print whose sides stay parallel one way reads 90° at every focal length; only its aspect differs).
    static let focalFractionsOfWidth: [Double] = [0.8, 0.65, 1.0, 0.5, 1.25, 1.6]

    /// The parallelogram this quad images under a camera with principal point `centre` and focal length `focalPx`:
    /// its corner angle's deviation from 90° (degrees) and its short/long side ratio. Nil when the quad is not the
    /// image of a parallelogram in front of that camera (a corner's depth would be ≤ 0).
    /// Corners are taken in order 0…3 around the quad: sides 0–1 and 3–2 are one pair, 0–3 and 1–2 the other.
    func rectifiedShape(centre: PixelPoint, focalPx: Double) -> (angleDeviationDegrees: Double, aspect: Double)? {
        func ray(_ p: PixelPoint) -> SIMD3<Double> { SIMD3((p.x - centre.x) / focalPx, (p.y - centre.y) / focalPx, 1) }
        func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
            SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
        }
        func dot(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double { (a * b).sum() }
        let m1 = ray(self[0]), m2 = ray(self[1]), m4 = ray(self[2]), m3 = ray(self[3])
        let c14 = cross(m1, m4)
        let d2 = dot(cross(m2, m4), m3), d3 = dot(cross(m3, m4), m2)
        guard abs(d2) > 1e-12, abs(d3) > 1e-12 else { return nil }
        let k2 = dot(c14, m3) / d2, k3 = dot(c14, m2) / d3
        guard k2 > 0, k3 > 0, k2 + k3 - 1 > 0 else { return nil }  // every corner in front of the camera
        let n2 = m2 * k2 - m1, n3 = m3 * k3 - m1
        let l2 = dot(n2, n2).squareRoot(), l3 = dot(n3, n3).squareRoot()
        guard l2 > 0, l3 > 0 else { return nil }
        let cosine = max(-1, min(1, dot(n2, n3) / (l2 * l3)))
        let angle = acos(cosine) * 180 / Double.pi
        return (abs(angle - 90), min(l2, l3) / max(l2, l3))
    }

    /// The most rectangular reading of this quad (readings within 0.5° of each other count as equal; the first wins)
    /// over the focal lengths tried (fractions of `frameWidthPx`, principal
    /// point at the frame's centre) and the affine view (image angles, mean side lengths): the corner angle's
    /// deviation from 90° in degrees and the print's short/long side ratio in that reading.
    public func rectangleFit(frameWidthPx: Int, frameHeightPx: Int) -> (angleDeviationDegrees: Double, aspect: Double) {
        let sides = meanSideLengthsPx
        let longPx = max(sides.width, sides.height)
        var best = (
            angleDeviationDegrees: maxRightAngleDeviationDegrees,
            aspect: longPx > 0 ? min(sides.width, sides.height) / longPx : 0
        )
        let centre = PixelPoint(x: Double(frameWidthPx) / 2, y: Double(frameHeightPx) / 2)
        for fraction in Quad.focalFractionsOfWidth {
            guard let shape = rectifiedShape(centre: centre, focalPx: fraction * Double(frameWidthPx)),
                shape.angleDeviationDegrees < best.angleDeviationDegrees - 0.5
            else { continue }
            best = shape
        }
        return best
    }
}
