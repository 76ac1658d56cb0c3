import ColorcamCore

extension PhotoDetector {
    /// Widens each candidate that is the picture inside a border to the paper's edge: where the segmenter sees
    /// paper all around just outside the candidate's outline (its interior is the whole sheet) and an even band of
    /// one width ends in an edge parallel to the sides (`UniformBorderFinder`), the outline moves out to that edge
    /// (refined where it is clear). The band test alone would also take a shadow's or the table's edge beside a
    /// borderless print; the segmenter's interior alone is too coarse (cells of 4 px) to place an edge. In place.
    func wideningCandidatesToTheirBorders(_ maps: SegmentationMaps, sampler: PlaneSampler) {
        guard segmenter != nil else { return }
        for index in candidates.indices {
            let inner = candidates[index].quad
            // The segmenter first (cheap): paper just outside the outline, or it is the paper's own edge.
            guard let near = inner.offsettingSides(byPx: 6), segmenterSeesPaper(between: inner, and: near, maps) else {
                trace?("not widened: the segmenter sees no paper just outside \(inner)"); continue
            }
            guard let found = uniformBorderFinder.outerOutline(around: inner, in: sampler, trace: trace) else {
                trace?("not widened: no border around \(inner)"); continue
            }
            guard segmenterSeesPaper(between: inner, and: found.quad, maps) else {
                trace?("not widened: the segmenter sees no paper under the border \(found.quad)"); continue
            }
            var quad = found.quad.canonicallyOrdered(), support = found.support
            if let tight = refiner.refine(found.quad, in: sampler, inwardPx: 1.5, outwardPx: 1.5),
                tight.quad.isConvex, tight.minSupport >= 0.5
            {
                quad = tight.quad.canonicallyOrdered()
                support = tight.meanSupport
            }
            // The paper's outline passes the shape checks as any outline does; its confidence is its own edge
            // support (fainter than the picture's edge: a tracker following the picture takes it only when two full
            // searches agree).
            guard
                let widened = checkedOutline(
                    quad, support: support, minimumSidePx: 0, reject: { reason in trace?("not widened: \(reason())") })
            else { continue }
            trace?("widened to its border: \(inner) -> \(quad)")
            candidates[index] = widened
        }
    }

    /// Whether the segmenter's interior covers the band between `inner` and `outer` (clockwise, corresponding
    /// sides): at least half of 28 points midway between them, 7 along each side. Its cells are 4 px and its
    /// interior fades over a cell or two at the paper's edge, so a thin border's band is never wholly inside. On
    /// tuning seeds 90 and 91, asking for 6 of 7 on every side, or 20, 14, 10, 7 of the 28 points, gave recall
    /// 86.8, 87.1, 87.2, 85.9, 85.2 % and 83.2, 83.5, 83.7, 83.2, 81.9 %.
    func segmenterSeesPaper(between inner: Quad, and outer: Quad, _ maps: SegmentationMaps) -> Bool {
        2 * pointsTheSegmenterSeesBetween(inner, and: outer, maps) >= 28
    }

    /// How many of 28 points midway between `inner` and `outer` (clockwise, corresponding sides; 7 along each side)
    /// lie in cells of the frame's maps whose interior probability reaches `interiorThreshold`.
    func pointsTheSegmenterSeesBetween(_ inner: Quad, and outer: Quad, _ maps: SegmentationMaps) -> Int {
        guard let segmenter else { return 0 }
        let grid = segmenter.grid, c = Double(grid.cellPx)
        let threshold = learnedParameters.interiorThreshold
        var inside = 0
        for side in 0..<4 {
            for k in 1..<8 {
                let t = Double(k) / 8
                let a = inner[side] + (inner[side + 1] - inner[side]) * t
                let b = outer[side] + (outer[side + 1] - outer[side]) * t
                let p = (a + b) / 2
                let i = min(grid.widthCells - 1, max(0, Int(p.x / c)))
                let j = min(grid.heightCells - 1, max(0, Int(p.y / c)))
                if maps.interior[j * maps.rowStride + i] >= threshold { inside += 1 }
            }
        }
        return inside
    }

    /// When `inner` is a picture inside a white border, the border's outer outline: found by stepping outwards from
    /// each side to the first clear edge (up to 15 % of the photo's size), accepted only when all four sides find
    /// it and the band between is bright (paper). Nil otherwise.
    func whiteBorderOutline(around inner: Quad, sampler: PlaneSampler) -> EdgeRefiner.Result? {
        let size = inner.area.squareRoot()
        guard
            let outer = refiner.refine(
                inner, in: sampler, inwardPx: -2.5, outwardPx: 0.15 * size,
                firstFromInside: true),
            outer.quad.isConvex, outer.minSupport >= 0.5, outer.meanSupport >= 0.7,
            outer.quad.area > inner.area * 1.04
        else { return nil }
        guard PhotoDetector.bandIsPaper(between: inner, and: outer.quad, sampler: sampler) else { return nil }
        guard let tight = refiner.refine(outer.quad, in: sampler, inwardPx: 2, outwardPx: 2), tight.quad.isConvex
        else { return nil }
        return tight
    }

    /// Whether the band between `inner` and `outer` (both clockwise, corresponding corners) is bright and even, like
    /// a print's white border: sampled midway between them along each side.
    static func bandIsPaper(between inner: Quad, and outer: Quad, sampler: PlaneSampler) -> Bool {
        var sum = 0.0, sumSquares = 0.0, n = 0.0
        for side in 0..<4 {
            for k in 1..<8 {
                let t = Double(k) / 8
                let a = inner[side] + (inner[side + 1] - inner[side]) * t
                let b = outer[side] + (outer[side + 1] - outer[side]) * t
                let v = sampler.lumaAt((a + b) / 2)
                sum += v; sumSquares += v * v; n += 1
            }
        }
        let mean = sum / n, variance = max(0, sumSquares / n - mean * mean)
        return PaperBand.isPaper(meanLuma: mean, stdDevLuma: variance.squareRoot())
    }

    /// Whether `inner` is the picture inside `outer`'s white border in `frame`: `inner` lies inside `outer` (within
    /// 2 px: an outline that took the picture's edge on some sides and the paper's on others shares those sides with
    /// the paper's outline, its corners on them) and the band between them is bright and even. Both in canonical
    /// corner order.
    public func isPictureInsideBorder(_ inner: Quad, of outer: Quad, in frame: FrameBuffer) -> Bool {
        isPictureInsideBorder(inner, of: outer, sampler: PlaneSampler(frame))
    }

    func isPictureInsideBorder(_ inner: Quad, of outer: Quad, sampler: PlaneSampler) -> Bool {
        guard outer.encloses(inner, tolerancePx: 2) else { return false }
        // Pair each inner corner with its outer one (canonical order may start at different corners).
        var bestShift = 0, bestDistance = Double.infinity
        for shift in 0..<4 {
            var distance = 0.0
            for i in 0..<4 {
                let d = inner[i + shift] - outer[i]
                distance += (d * d).sum()
            }
            if distance < bestDistance { bestDistance = distance; bestShift = shift }
        }
        let aligned = Quad(inner[bestShift], inner[bestShift + 1], inner[bestShift + 2], inner[bestShift + 3])
        return PhotoDetector.bandIsPaper(between: aligned, and: outer, sampler: sampler)
    }
}
