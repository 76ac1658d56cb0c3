/// Places a print's outline on a segmenter's interior map: each side of a starting quad moves to where the interior
/// probability falls through 0.5 (read bilinearly between cell centres, so the line lands between cells), a
/// straight line fitted through those crossings, adjacent lines intersected for the corners.
///
/// What it is for: a print whose paper edge the frame barely shows on some side (a print the colour of the table
/// there, a hand over its edge, blur) is still seen by the segmenter, whose interior map gives that side to about a
/// pixel (on the generator's training-split tuning scenes, the median side of the 0.5 contour lay 1.2 px from the
/// paper's edge at 640×480, 4-px cells). `PhotoDetector` uses it where the full-resolution edge search cannot place
/// a learned region (`PhotoDetector+Learned.swift`).
///
/// Units: the quad and the result in frame pixels; the map in grid cells (`SegmentationGrid`). Reuses its scratch
/// storage (no allocation once grown). One thread at a time.
struct MapOutline {
    /// How far inside and outside each side the crossing is searched, cells.
    var reachCells = 3.0
    /// Profile step along the normal, cells.
    var stepCells = 0.25
    /// Samples per side: one per cell of its length, within these bounds.
    var minimumSamples = 8
    var maximumSamples = 40
    /// A side needs a crossing at this fraction of its samples …
    var minimumCoverage = 0.6
    /// … and its crossings within this of their fitted line (root mean square, after the outlier pass), cells.
    var maximumResidualCells = 0.6
    /// Crossings further than this from the first fit are left out of the second, cells.
    var outlierCells = 0.75
    private var points: [PixelPoint] = []

    init() { points.reserveCapacity(64) }

    /// The outline on `maps` near `quad` (clockwise on screen, frame px), or nil when a side's crossings are too few
    /// or scattered, or the lines do not meet as a convex quad.
    mutating func fit(_ quad: Quad, maps: SegmentationMaps, grid: SegmentationGrid) -> Quad? {
        let c = Double(grid.cellPx)
        var lines = (
            (PixelPoint.zero, PixelPoint.zero), (PixelPoint.zero, PixelPoint.zero),
            (PixelPoint.zero, PixelPoint.zero), (PixelPoint.zero, PixelPoint.zero)
        )
        let steps = Int((2 * reachCells / stepCells).rounded())
        for side in 0..<4 {
            let a = quad[side], b = quad[side + 1]
            let along = b - a
            let length = (along * along).sum().squareRoot()
            guard length > 2 * c else { return nil }
            let u = along / length
            let n = PixelPoint(u.y, -u.x)  // outward (clockwise on screen)
            let samples = min(maximumSamples, max(minimumSamples, Int(length / c)))
            points.removeAll(keepingCapacity: true)
            for s in 0..<samples {
                let base = a + along * (0.1 + 0.8 * (Double(s) + 0.5) / Double(samples))
                // From inside to outside: the inside→outside crossing nearest the side.
                var best = Double.infinity
                var previous = MapOutline.interior(maps, grid, base + n * (-reachCells * c))
                for k in 1...steps {
                    let offset = (-reachCells + Double(k) * stepCells) * c
                    guard let value = MapOutline.interior(maps, grid, base + n * offset), let before = previous
                    else { previous = nil; continue }
                    previous = value
                    guard before >= 0.5, value < 0.5 else { continue }
                    let crossing = offset - stepCells * c * Double((0.5 - value) / (before - value))
                    if abs(crossing) < abs(best) { best = crossing }
                }
                if best.isFinite { points.append(base + n * best) }
            }
            guard Double(points.count) >= minimumCoverage * Double(samples),
                let first = EdgeRefiner.fitLine(points, excludingBeyond: nil),
                let fit = EdgeRefiner.fitLine(points, excludingBeyond: (first.point, first.direction, outlierCells * c))
            else { return nil }
            var sumSquares = 0.0, kept = 0.0
            let normal = PixelPoint(-fit.direction.y, fit.direction.x)
            for p in points {
                let d = ((p - fit.point) * normal).sum()
                if abs(d) <= outlierCells * c { sumSquares += d * d; kept += 1 }
            }
            guard kept >= minimumCoverage * Double(samples),
                (sumSquares / kept).squareRoot() <= maximumResidualCells * c
            else { return nil }
            switch side {
            case 0: lines.0 = fit
            case 1: lines.1 = fit
            case 2: lines.2 = fit
            default: lines.3 = fit
            }
        }
        guard let c0 = EdgeRefiner.intersect(lines.3.0, lines.3.1, lines.0.0, lines.0.1),
            let c1 = EdgeRefiner.intersect(lines.0.0, lines.0.1, lines.1.0, lines.1.1),
            let c2 = EdgeRefiner.intersect(lines.1.0, lines.1.1, lines.2.0, lines.2.1),
            let c3 = EdgeRefiner.intersect(lines.2.0, lines.2.1, lines.3.0, lines.3.1)
        else { return nil }
        let result = Quad(c0, c1, c2, c3)
        guard result.isConvex, result.signedArea > 0 else { return nil }
        // A corner far from the starting quad's: two nearly parallel lines met far away.
        let limit = 2 * reachCells * c
        for i in 0..<4 {
            let d = result[i] - quad[i]
            if (d * d).sum() > limit * limit { return nil }
        }
        return result
    }

    /// The interior probability at frame point `p`, bilinear between cell centres; nil outside the grid's centres.
    @inline(__always) static func interior(_ maps: SegmentationMaps, _ grid: SegmentationGrid, _ p: PixelPoint)
        -> Float?
    {
        let c = Double(grid.cellPx)
        let u = p.x / c - 0.5, v = p.y / c - 0.5
        guard u >= 0, v >= 0, u < Double(grid.widthCells - 1), v < Double(grid.heightCells - 1) else { return nil }
        let i = Int(u), j = Int(v)
        let fu = Float(u - Double(i)), fv = Float(v - Double(j))
        let row = maps.interior + j * maps.rowStride + i
        let top = row[0] + (row[1] - row[0]) * fu
        let bottom = row[maps.rowStride] + (row[maps.rowStride + 1] - row[maps.rowStride]) * fu
        return top + (bottom - top) * fv
    }
}
