import ColorcamCore
import Detect
import Testing

@testable import PhotoPipeline

/// `CoverMask` on synthetic frames: a hand on a grey print is found where it lies; a colour print, which has no one
/// tone, is never taken for a covered one.
@Suite final class CoverMaskTests {
    let scratch = UnsafeMutablePointer<Int32>.allocate(capacity: CoverMask.scratchCount)
    let mask = UnsafeMutablePointer<UInt64>.allocate(capacity: CoverMask.words)

    deinit {
        scratch.deallocate()
        mask.deallocate()
    }

    @Test func aHandOnAGreyPrintIsFoundWhereItLies() {
        let frame = sceneFrame(quad: printQuad, picture: landscape)
        let clean = CoverMask.measure(FrameSampler(frame), quad: printQuad, scratch: scratch, mask: mask)
        #expect(clean == 0, "a clean grey print: \(clean)")
        // A disc of radius 28 px at (190, 120): about 2 400 of the print's ≈ 23 800 px, inside the measured grid.
        paintDisc(on: frame, centreX: 190, centreY: 120, radiusPx: 28, cb: 105, cr: 158)
        let covered = CoverMask.measure(FrameSampler(frame), quad: printQuad, scratch: scratch, mask: mask)
        #expect(covered > 0.07 && covered < 0.16, "covered \(covered)")
        guard let toPrint = Homography(from: printQuad, to: unitSquare) else {
            Issue.record("degenerate print")
            return
        }
        let atHand = toPrint.apply(PixelPoint(190, 120))!, elsewhere = toPrint.apply(PixelPoint(100, 80))!
        #expect(CoverMask.isCovered(mask, u: atHand.x, v: atHand.y))
        #expect(!CoverMask.isCovered(mask, u: elsewhere.x, v: elsewhere.y))
    }

    @Test func aColourPrintIsNotTakenForACoveredOne() {
        let frame = sceneFrame(quad: printQuad, picture: landscape)
        // Colour bands across the print: a third reddish, a third bluish, a third neutral.
        for (x, cb, cr): (Int, UInt8, UInt8) in [(100, 100, 170), (160, 170, 100)] {
            for y in stride(from: 40, to: 200, by: 4) {
                paintDisc(on: frame, centreX: x, centreY: y, radiusPx: 30, cb: cb, cr: cr, lumaToo: false)
            }
        }
        let covered = CoverMask.measure(FrameSampler(frame), quad: printQuad, scratch: scratch, mask: mask)
        #expect(covered == 0, "a colour print: \(covered)")
        #expect((0..<CoverMask.words).allSatisfy { mask[$0] == 0 })
    }

    let unitSquare = Quad(PixelPoint(0, 0), PixelPoint(1, 0), PixelPoint(1, 1), PixelPoint(0, 1))

    /// A disc of the given chroma (and, with `lumaToo`, luma 170) on the frame.
    func paintDisc(
        on frame: FrameBuffer, centreX: Int, centreY: Int, radiusPx: Int, cb: UInt8, cr: UInt8, lumaToo: Bool = true
    ) {
        let g = frame.geometry
        for y in max(0, centreY - radiusPx)...min(g.heightPx - 1, centreY + radiusPx) {
            for x in max(0, centreX - radiusPx)...min(g.widthPx - 1, centreX + radiusPx)
            where (x - centreX) * (x - centreX) + (y - centreY) * (y - centreY) <= radiusPx * radiusPx {
                if lumaToo { frame.luma.storeBytes(of: 170, toByteOffset: y * g.widthPx + x, as: UInt8.self) }
                let c = (y / 2) * g.chromaWidthPx + x / 2
                frame.cb.storeBytes(of: cb, toByteOffset: c, as: UInt8.self)
                frame.cr.storeBytes(of: cr, toByteOffset: c, as: UInt8.self)
            }
        }
    }
}
