/// Places a print's outline on a segmenter's maps: each side of a starting quad moves to where the interior
/// probability falls through 0.5, or to the edge map's ridge (`Reading`; either read bilinearly between cell centres,
/// so the line lands between cells), a straight line fitted through those points, adjacent lines intersected for the
/// corners.
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
    /// How far inside and outside each side the crossing is searched, cells (unless `fit` is given a reach).
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
    /// What each side moves to: the interior map's inside→outside crossing of 0.5, or the edge map's ridge (a local
    /// maximum of at least 0.5 across the side, placed between profile steps by a parabola); either the one nearest
    /// the side.
    enum Reading: Sendable { case interiorCrossing, edgeRidge }
    private var points: [PixelPoint] = []

    init() { points.reserveCapacity(64) }

    /// The outline on `maps` near `quad` (clockwise on screen, frame px), read as `reading` says within `reachCells`
    /// (default: the struct's) of each side, or nil when a side's points are too few or scattered, or the lines do
    /// not meet as a convex quad.
    mutating func fit(
        _ quad: Quad, maps: SegmentationMaps, grid: SegmentationGrid, reading: Reading = .interiorCrossing,
        reachCells reach: Double? = nil
    ) -> Quad? {
        let reachCells = reach ?? self.reachCells
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
                let start = base + n * (-reachCells * c), step = n * (stepCells * c)
                let best =
                    reading == .interiorCrossing
                    ? crossing(maps, grid, from: start, step: step, steps: steps)
                    : ridge(maps, grid, from: start, step: step, steps: steps)
                if best.isFinite { points.append(start + step * best) }
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

    /// The inside→outside crossing of 0.5 on the interior map along the profile `start + step × k`, k in 0…`steps`,
    /// nearest the profile's middle (the side), in steps; infinity when there is none.
    private func crossing(
        _ maps: SegmentationMaps, _ grid: SegmentationGrid, from start: PixelPoint, step: PixelPoint, steps: Int
    ) -> Double {
        let middle = Double(steps) / 2
        var best = Double.infinity
        var previous = MapOutline.sample(maps.interior, maps, grid, start)
        for k in 1...steps {
            guard let value = MapOutline.sample(maps.interior, maps, grid, start + step * Double(k)),
                let before = previous
            else { previous = nil; continue }
            previous = value
            guard before >= 0.5, value < 0.5 else { continue }
            let crossing = Double(k) - Double((0.5 - value) / (before - value))
            if abs(crossing - middle) < abs(best - middle) { best = crossing }
        }
        return best
    }

    /// The edge map's ridge along the profile `start + step × k`, k in 0…`steps`: the local maximum of at least 0.5
    /// nearest the profile's middle (the side), placed between steps by a parabola through it and its neighbours, in
    /// steps; infinity when there is none.
    private func ridge(
        _ maps: SegmentationMaps, _ grid: SegmentationGrid, from start: PixelPoint, step: PixelPoint, steps: Int
    ) -> Double {
        let middle = Double(steps) / 2
        var best = Double.infinity
        var before: Float? = nil
        var here = MapOutline.sample(maps.edge, maps, grid, start)
        for k in 1...steps {
            let after = MapOutline.sample(maps.edge, maps, grid, start + step * Double(k))
            defer { (before, here) = (here, after) }
            guard let b = before, let h = here, let a = after, h >= 0.5, h >= b, h > a else { continue }
            let curvature = b - 2 * h + a
            let vertex = curvature < 0 ? Double(0.5 * (b - a) / curvature) : 0
            let peak = Double(k - 1) + max(-0.5, min(0.5, vertex))
            if abs(peak - middle) < abs(best - middle) { best = peak }
        }
        return best
    }

    /// `plane`'s value (one of `maps`' planes) at frame point `p`, bilinear between cell centres; nil outside the
    /// grid's centres.
    @inline(__always) static func sample(
        _ plane: UnsafePointer<Float>, _ maps: SegmentationMaps, _ grid: SegmentationGrid, _ p: PixelPoint
    ) -> Float? {
        let c = Double(grid.cellPx)
        let u = p.x / c - 0.5, v = p.y / c - 0.5
        guard u >= 0, v >= 0, u < Double(grid.widthCells - 1), v < Double(grid.heightCells - 1) else { return nil }
        let i = Int(u), j = Int(v)
        let fu = Float(u - Double(i)), fv = Float(v - Double(j))
        let row = plane + j * maps.rowStride + i
        let top = row[0] + (row[1] - row[0]) * fu
        let bottom = row[maps.rowStride] + (row[maps.rowStride + 1] - row[maps.rowStride]) * fu
        return top + (bottom - top) * fv
    }
}
