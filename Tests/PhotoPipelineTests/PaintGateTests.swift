import ColorcamCore
import Foundation
import Infer
import Stream
import Testing

@testable import Detect
@testable import PhotoPipeline

/// Which tracks get colour (`PaintGate`), alone and through the processor: a print keeps its colour while it slides
/// and while it is partly out of view, and is colorized only from whole views.
@Suite(.serialized) struct PaintGateTests {
    let geometry = FrameGeometry(widthPx: 320, heightPx: 240, chroma: .yuv420(.jpeg))

    func track(_ id: Int, _ quad: Quad, missed: Int = 0) -> Track {
        Track(id: id, quad: quad, confidence: 1, aspectRatio: 0.7, missedFrames: missed)
    }

    func moved(_ quad: Quad, _ dx: Double, _ dy: Double = 0) -> Quad {
        Quad(
            quad[0] + PixelPoint(dx, dy), quad[1] + PixelPoint(dx, dy), quad[2] + PixelPoint(dx, dy),
            quad[3] + PixelPoint(dx, dy))
    }

    @Test func aTrackIsPaintedFromItsSecondMeasuredFrameWhileItMovesWithinTheLimit() {
        var gate = PaintGate(geometry: geometry, maxSpeedPx: 8)
        var painted: [Bool] = []
        // Frames 0–2 at rest, 3–5 sliding 6 px/frame, 6 jumping 12 px, 7 coasting (missed), 8–9 measured again.
        let offsets: [Double] = [0, 0, 0, 6, 12, 18, 30, 30, 30, 30]
        for (frame, dx) in offsets.enumerated() {
            painted.append(gate.paints(track(1, moved(printQuad, dx), missed: frame == 7 ? 1 : 0)))
            gate.endFrame()
        }
        #expect(painted == [false, true, true, true, true, true, false, false, false, true])
    }

    @Test func eachTrackIsJudgedByItsOwnPreviousFrame() {
        var gate = PaintGate(geometry: geometry, maxSpeedPx: 8)
        let other = moved(printQuad, 0, 30)
        _ = gate.paints(track(1, printQuad)); gate.endFrame()
        // Track 2 is new in this frame; track 1 moved 5 px.
        let newTrack = gate.paints(track(2, other))
        let slid = gate.paints(track(1, moved(printQuad, 5)))
        gate.endFrame()
        let secondFrame = gate.paints(track(2, other))
        // A frame without track 1: it must wait again.
        gate.endFrame()
        let back = gate.paints(track(1, moved(printQuad, 5)))
        #expect(!newTrack && slid && secondFrame && !back)
    }

    @Test func wholenessMeansEveryCornerInsideTheFrame() {
        let gate = PaintGate(geometry: geometry)
        #expect(gate.isWhole(printQuad))
        #expect(!gate.isWhole(moved(printQuad, 90)))  // right corners beyond x = 318
        #expect(!gate.isWhole(moved(printQuad, 0, -49)))
    }

    /// Mean |chroma − 128| over the inner half of `quad` that lies inside the frame (chroma samples).
    func chromaInside(_ frame: FrameBuffer, _ quad: Quad) -> Double {
        let g = frame.geometry
        let c = quad.centroid
        var sum = 0.0, n = 0.0
        for cy in 0..<g.chromaHeightPx {
            for cx in 0..<g.chromaWidthPx {
                let p = PixelPoint(Double(2 * cx) + 1, Double(2 * cy) + 1)
                let inner = PixelPoint(c.x + 2 * (p.x - c.x), c.y + 2 * (p.y - c.y))  // p in the half-size quad
                guard quad.contains(inner) else { continue }
                let i = cy * g.chromaWidthPx + cx
                sum +=
                    abs(Double(frame.cb.load(fromByteOffset: i, as: UInt8.self)) - 128)
                    + abs(Double(frame.cr.load(fromByteOffset: i, as: UInt8.self)) - 128)
                n += 1
            }
        }
        return n > 0 ? sum / n : 0
    }

    @Test func aSlidingPrintKeepsItsColourAndIsColorizedOnlyWhileWhole() throws {
        let bundle = try ModelBundle.load(repositoryRoot + "/Models/colorcam-default")
        var options = PhotoPipelineOptions()
        options.background = .gray
        let run = ProcessorTests.Run(try PhotoColorProcessor(bundle: bundle, geometry: geometry, options: options))
        let start = moved(printQuad, -40)  // x 24…210
        for _ in 0..<10 { _ = run.step(sceneFrame(quad: start, picture: landscape)) }
        #expect(run.requests.map(\.reason) == [.new])
        let atRest = sceneFrame(quad: start, picture: landscape)
        _ = run.step(atRest)
        let restChroma = chromaInside(atRest, start)
        #expect(restChroma > 1.0, "chroma at rest \(restChroma)")
        // Slide right at 4 px/frame until the print is well past the frame's right edge (x up to 290 + 210 - 24).
        var colouredFrames = 0, frames = 0, partialFrames = 0
        for k in 1...40 {
            let quad = moved(start, Double(4 * k))
            let frame = sceneFrame(quad: quad, picture: landscape)
            _ = run.step(frame)
            frames += 1
            if chromaInside(frame, quad) > 0.5 * restChroma { colouredFrames += 1 }
            if quad[1].x > 320 { partialFrames += 1 }
        }
        #expect(partialFrames >= 10)
        #expect(Double(colouredFrames) >= 0.8 * Double(frames), "coloured on \(colouredFrames) of \(frames) frames")
        // The colours came from the whole print: no colorization from a partial view (the content did not change).
        #expect(run.requests.map(\.reason) == [.new], "requests \(run.requests)")
    }
}
