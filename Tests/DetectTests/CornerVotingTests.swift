import ColorcamCore
import Foundation
import Testing

@testable import Detect

/// Maps with corner planes painted from known outlines (grid cells), the way the trainer labels them: a cell whose
/// centre lies in a quad (the last one listed, on top, wins) is interior and predicts that quad's corners, starting
/// at a corner that changes from cell to cell (the model may start anywhere), plus `noiseCells` of deterministic
/// scatter. Cells listed in `hidden` are left as table.
private final class PaintedCornerMaps {
    let widthCells: Int, heightCells: Int, rowStride: Int
    let interior: UnsafeMutablePointer<Float>
    let edge: UnsafeMutablePointer<Float>
    let corners: UnsafeMutablePointer<Float>
    var plane: Int { rowStride * heightCells }

    init(
        widthCells: Int, heightCells: Int, quads: [Quad], noiseCells: Double = 0,
        hidden: (Int, Int) -> Bool = { _, _ in false }
    ) {
        self.widthCells = widthCells
        self.heightCells = heightCells
        rowStride = widthCells + 5
        let plane = rowStride * heightCells
        interior = .allocate(capacity: plane)
        interior.initialize(repeating: 0, count: plane)
        edge = .allocate(capacity: plane)
        edge.initialize(repeating: 0, count: plane)
        corners = .allocate(capacity: 8 * plane)
        corners.initialize(repeating: 0, count: 8 * plane)
        for j in 0..<heightCells {
            for i in 0..<widthCells where !hidden(i, j) {
                let centre = PixelPoint(Double(i) + 0.5, Double(j) + 0.5)
                guard let quad = quads.last(where: { $0.contains(centre) }) else { continue }
                let at = j * rowStride + i
                interior[at] = 1
                let start = (i + 2 * j) % 4
                for c in 0..<4 {
                    let corner = quad[(c + start) % 4]
                    let nx = noiseCells * sin(Double(7 * i + 3 * j + c)),
                        ny = noiseCells * cos(Double(5 * i + 11 * j + c))
                    corners[2 * c * plane + at] = Float(corner.x - centre.x + nx)
                    corners[(2 * c + 1) * plane + at] = Float(corner.y - centre.y + ny)
                }
            }
        }
    }

    deinit {
        interior.deallocate()
        edge.deallocate()
        corners.deallocate()
    }

    var maps: SegmentationMaps {
        SegmentationMaps(interior: interior, edge: edge, rowStride: rowStride, corners: corners, planeStride: plane)
    }
}

/// The largest distance between `a`'s corners and `b`'s, over the best cyclic pairing.
private func cornerError(_ a: Quad, _ b: Quad) -> Double {
    (0..<4).map { shift in
        (0..<4).map { c -> Double in
            let d = a[c] - b[(c + shift) % 4]; return (d * d).sum().squareRoot()
        }.max()!
    }.min()!
}

private func quad(_ points: [(Double, Double)]) -> Quad {
    Quad(
        PixelPoint(points[0].0, points[0].1), PixelPoint(points[1].0, points[1].1),
        PixelPoint(points[2].0, points[2].1), PixelPoint(points[3].0, points[3].1))
}

@Test func twoOverlappingPrintsGiveTwoOutlinesWhateverCornerEachCellStartsAt() throws {
    let below = quad([(20, 20), (60, 24), (57, 70), (17, 66)])  // rotated a little
    let above = quad([(50, 50), (90, 50), (90, 100), (50, 100)])  // covers below's lower-right corner
    let painted = PaintedCornerMaps(widthCells: 120, heightCells: 110, quads: [below, above], noiseCells: 0.8)
    let voting = CornerVoting(widthCells: 120, heightCells: 110, cellPx: 4)
    voting.decode(painted.maps)
    #expect(voting.quads.count == 2)
    let found = voting.quads.map(\.quad)
    #expect(found.contains { cornerError($0, below) < 0.3 }, "\(found)")
    #expect(found.contains { cornerError($0, above) < 0.3 }, "\(found)")
    // The print on top is whole: it has the most cells and comes first.
    #expect(cornerError(found[0], above) < 0.3)
}

@Test func aPrintCutInTwoByAHandIsOneOutline() throws {
    let print = quad([(30, 20), (90, 20), (90, 60), (30, 60)])
    let painted = PaintedCornerMaps(
        widthCells: 120, heightCells: 90, quads: [print], noiseCells: 0.5,
        hidden: { i, _ in i >= 55 && i < 64 })  // a finger across the middle
    let voting = CornerVoting(widthCells: 120, heightCells: 90, cellPx: 4)
    voting.decode(painted.maps)
    #expect(voting.quads.count == 1)
    #expect(cornerError(try #require(voting.quads.first).quad, print) < 0.3)
}

@Test func scatteredVotesAreNoPrint() throws {
    // Ten cells of a large predicted outline: far below the share of its area that must vote for it.
    let print = quad([(10, 10), (100, 10), (100, 80), (10, 80)])
    let painted = PaintedCornerMaps(
        widthCells: 120, heightCells: 90, quads: [print],
        hidden: { i, j in !(j == 45 && i >= 50 && i < 60) })
    let voting = CornerVoting(widthCells: 120, heightCells: 90, cellPx: 4)
    voting.decode(painted.maps)
    #expect(voting.quads.isEmpty)
    // Without corner planes nothing is decoded.
    let maps = painted.maps
    voting.decode(SegmentationMaps(interior: maps.interior, edge: maps.edge, rowStride: maps.rowStride))
    #expect(voting.quads.isEmpty)
}

@Test func aPrintPartlyOutOfViewKeepsItsHiddenCorners() throws {
    let print = quad([(-15, 30), (40, 30), (40, 70), (-15, 70)])  // a third out of the frame on the left
    let painted = PaintedCornerMaps(widthCells: 100, heightCells: 90, quads: [print], noiseCells: 0.5)
    let voting = CornerVoting(widthCells: 100, heightCells: 90, cellPx: 4)
    voting.decode(painted.maps)
    #expect(voting.quads.count == 1)
    #expect(cornerError(try #require(voting.quads.first).quad, print) < 0.3)
}
