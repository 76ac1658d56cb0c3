import Foundation
import Testing

@testable import PhotoPipeline

/// `thumbnailBlockChanges`: a change in one place counts, a misregistration or a change of light does not.
struct ThumbnailChangeTests {
    let side = FrameSampler.thumbnailSide

    /// A textured thumbnail (a landscape-like gradient with ripples), `shift` cells to the right.
    func textured(shift: Double = 0) -> [Float] {
        (0..<(side * side)).map { i in
            let x = Double(i % side) - shift, y = Double(i / side)
            return Float(120 + 60 * sin(x / 3) * cos(y / 4) + 2 * y)
        }
    }

    func change(_ a: [Float], _ b: [Float]) -> (local: Float, global: Float) {
        a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in
                (
                    thumbnailBlockChanges(pa.baseAddress!, pb.baseAddress!).max(),
                    thumbnailDistance(pa.baseAddress!, pb.baseAddress!)
                )
            }
        }
    }

    @Test func theSamePictureDoesNotChange() {
        let a = textured()
        #expect(change(a, a).local == 0)
        // Brighter and flatter, as under other light.
        #expect(change(a, a.map { $0 * 0.7 + 40 }).local < 0.01)
        // Half a cell and a whole cell out of register: a loose outline.
        #expect(change(a, textured(shift: 0.5)).local < 0.3)
        #expect(change(a, textured(shift: 1)).local < 0.3)
    }

    @Test func aFingerOverOnePlaceIsTold() {
        let a = textured()
        var b = a
        // A flat 3×4-cell finger (about 1 % of the print) of a grey the picture also has.
        for y in 12..<16 { for x in 20..<23 { b[y * side + x] = 190 } }
        let (local, global) = change(a, b)
        #expect(local > 0.6, "local change \(local)")
        #expect(global < 0.25, "the whole thumbnail's distance \(global) would not see it")
    }

    /// A finger over the top edge in `covered` (grid cells and the outline beside them), none in `clear`: the
    /// outline's contrast there is 5 levels with the finger (skin both sides of the edge), 80 without.
    @Test func theViewWithTheClearerEdgeIsTheOneWithoutTheHand() {
        let clear = textured() + [Float](repeating: 80, count: 4 * side)
        var covered = clear
        for y in 0..<5 { for x in 12..<16 { covered[y * side + x] = 190 } }
        for i in 12..<16 { covered[side * side + i] = 5 }
        func change(_ now: [Float], _ before: [Float]) -> OutlineChange {
            now.withUnsafeBufferPointer { n in
                before.withUnsafeBufferPointer { b in
                    outlineChange(now: n.baseAddress!, before: b.baseAddress!, threshold: 0.6)
                }
            }
        }
        #expect(change(clear, covered) == .regained)
        #expect(change(covered, clear) == .lost)
        #expect(change(clear, clear) == .none)
        // The finger moved along the edge: clearer in one place, less clear in another.
        var moved = clear
        for y in 0..<5 { for x in 20..<24 { moved[y * side + x] = 190 } }
        for i in 20..<24 { moved[side * side + i] = 5 }
        #expect(change(moved, covered) == .none)
        // A change away from the edge says nothing of it.
        var inner = clear
        for y in 14..<18 { for x in 14..<18 { inner[y * side + x] = 190 } }
        #expect(change(inner, clear) == .none)
    }
}
