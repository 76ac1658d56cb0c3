import Foundation
import Testing

@testable import Detect

/// `Quad.rectangleFit`: a print seen by a tilted camera reads as the rectangle it is.
struct QuadPerspectiveTests {
    /// The image of a `widthUnits × heightUnits` rectangle rotated by `spinDegrees` on a table seen by a pinhole
    /// camera (focal `focalPx`, principal point at the centre of a 640×480 frame) tilted `tiltDegrees` from looking
    /// straight down, the rectangle's centre `distance` focal lengths away on the optical axis.
    static func project(
        widthUnits: Double, heightUnits: Double, spinDegrees: Double, tiltDegrees: Double,
        focalPx: Double, offset: PixelPoint = PixelPoint(x: 0, y: 0)
    ) -> Quad {
        let spin = spinDegrees * .pi / 180, tilt = tiltDegrees * .pi / 180
        let corners = [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)].map { (u, v) -> PixelPoint in
            let x0 = u * widthUnits + offset.x, y0 = v * heightUnits + offset.y
            let x = x0 * cos(spin) - y0 * sin(spin), y = x0 * sin(spin) + y0 * cos(spin)
            // Camera frame: rotate the table about the x axis by the tilt, then push it 3 units away.
            let yc = y * cos(tilt), zc = 3 + y * sin(tilt)
            return PixelPoint(x: 320 + focalPx * x / zc, y: 240 + focalPx * yc / zc)
        }
        return Quad(corners[0], corners[1], corners[2], corners[3])
    }

    @Test(arguments: [(0.0, 10.0), (35.0, 0.0), (45.0, 30.0), (50.0, 60.0)])
    func aTiltedPrintReadsAsItsOwnRectangle(tiltDegrees: Double, spinDegrees: Double) {
        for focalFraction in [0.65, 0.8, 1.0] {
            let quad = Self.project(
                widthUnits: 1.5, heightUnits: 1.0, spinDegrees: spinDegrees,
                tiltDegrees: tiltDegrees, focalPx: focalFraction * 640)
            let fit = quad.rectangleFit(frameWidthPx: 640, frameHeightPx: 480)
            #expect(fit.angleDeviationDegrees < 1.0, "tilt \(tiltDegrees) spin \(spinDegrees) f \(focalFraction)")
            // A print square to the tilt's axis keeps its sides parallel one way: its angles read 90° at every focal
            // length and its aspect only at the right one; the fit prefers a typical webcam's (0.8 × width).
            if focalFraction == 0.8 || spinDegrees >= 30 {
                #expect(
                    abs(fit.aspect - 2.0 / 3.0) < 0.03, "aspect \(fit.aspect) tilt \(tiltDegrees) f \(focalFraction)")
            }
        }
    }

    @Test func strongTiltDefeatsTheImageAnglesButNotTheFit() {
        let quad = Self.project(
            widthUnits: 1.5, heightUnits: 1.0, spinDegrees: 40, tiltDegrees: 50, focalPx: 0.8 * 640,
            offset: PixelPoint(x: 0.6, y: -0.5))
        #expect(quad.maxRightAngleDeviationDegrees > 30)  // what the image-angle check rejected
        #expect(quad.rectangleFit(frameWidthPx: 640, frameHeightPx: 480).angleDeviationDegrees < 1.0)
    }

    @Test func aSlantedParallelogramStaysUnrectangular() {
        // A parallelogram centred on the principal point with 45° and 135° corners: its sides have no vanishing
        // points, so every focal length reads it as it is drawn.
        let slant = Quad(
            PixelPoint(x: 280, y: 180), PixelPoint(x: 480, y: 180), PixelPoint(x: 360, y: 300),
            PixelPoint(x: 160, y: 300))
        #expect(slant.rectangleFit(frameWidthPx: 640, frameHeightPx: 480).angleDeviationDegrees > 30)
    }
}
