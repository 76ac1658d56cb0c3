extension PhotoDetector {
    /// The outline the interior map gives near `start` (clockwise on screen, frame px; `MapOutline.fit`) on the
    /// paper's edges (`edgesAlong`); nil unless both are found.
    func mapOutlineOnEdges(
        from start: Quad, maps: SegmentationMaps, grid: SegmentationGrid, sampler: PlaneSampler
    ) -> EdgeRefiner.Result? {
        guard let onMap = mapOutline.fit(start, maps: maps, grid: grid) else { return nil }
        return edgesAlong(onMap, sampler: sampler)
    }

    /// `quad`'s sides each moved onto the paper's edge found within 2 px of it (the peak nearest the side); nil
    /// unless every side finds its edge there (`EdgeRefiner.minimumSupportToMove` of its samples on its line).
    func edgesAlong(_ quad: Quad, sampler: PlaneSampler) -> EdgeRefiner.Result? {
        guard
            let placed = refiner.refine(
                quad, in: sampler, inwardPx: 2, outwardPx: 2, keepingUnfoundSides: true, nearestPeak: true),
            placed.quad.isConvex, placed.keptSides == 0
        else { return nil }
        return placed
    }

    /// A learned region that the edge search could not place from its coarse quad (`considerRegion`: it searched
    /// the wrong edges, or too widely) is placed from the interior map's outline instead, when every side of that
    /// outline lies on the paper's edge (`mapOutlineOnEdges`). Same checks as every candidate (`acceptOutline`).
    func considerMapOutline(
        _ region: RegionExtractor.Region, of extractor: RegionExtractor, maps: SegmentationMaps,
        sampler: PlaneSampler, minimumSidePx: Double
    ) {
        guard let segmenter else { return }
        let grid = segmenter.grid
        func reject(_ why: @autoclosure () -> String) { traceRegion("map outline", region, why()) }
        guard let start = unplacedStart(region, of: extractor, reject: reject) else { return }
        guard let placed = mapOutlineOnEdges(from: start, maps: maps, grid: grid, sampler: sampler) else {
            reject("no outline on the map with its edges"); return
        }
        acceptOutline(
            placed.quad.canonicallyOrdered(), support: placed.meanSupport, minimumSidePx: minimumSidePx,
            reject: reject)
    }

    /// Each candidate whose outline the interior map places elsewhere (mean corner distance over
    /// `mapDisagreementCells`: the edge search took a shadow, a line in the picture or the table's texture for a
    /// side) is moved to the map's outline on its edges, when those edges support it at least `mapSupportFraction` as
    /// well and it passes every candidate's checks (`checkedOutline`). In place, without allocating.
    func movingCandidatesTheMapPlacesElsewhere(_ maps: SegmentationMaps, sampler: PlaneSampler, minimumSidePx: Double) {
        guard let segmenter else { return }
        let grid = segmenter.grid
        let p = learnedParameters
        let limitPx = p.mapDisagreementCells * Double(grid.cellPx)
        for index in candidates.indices {
            let candidate = candidates[index]
            var start = candidate.quad
            if start.signedArea < 0 { start = Quad(start[3], start[2], start[1], start[0]) }
            guard let onMap = mapOutline.fit(start, maps: maps, grid: grid) else { continue }
            var distancePx = Double.infinity
            for shift in 0..<4 { distancePx = min(distancePx, onMap.meanCornerDistance(to: start, shift: shift)) }
            guard distancePx > limitPx, let placed = edgesAlong(onMap, sampler: sampler),
                placed.meanSupport >= p.mapSupportFraction * candidate.confidence,
                let moved = checkedOutline(
                    placed.quad.canonicallyOrdered(), support: placed.meanSupport, minimumSidePx: minimumSidePx,
                    reject: { _ in })
            else { continue }
            trace?("moved to the map's outline (\(distancePx) px away): \(candidate.quad) -> \(moved.quad)")
            candidates[index] = moved
        }
    }

    /// A learned region that no other step placed (`considerLearnedRegions`), placed on the segmenter's maps alone:
    /// the sides of its quad (`coarseOutline`) moved to the edge map's ridge within
    /// `LearnedRegionParameters.mapsAloneReachCells` (`MapOutline`, `.edgeRidge`), kept only when the segmenter sees
    /// paper at all 25 lattice points inside the outline (`pointsTheSegmenterSeesInside`) and table around it (under
    /// a quarter of 28 points between it and its sides moved 2 cells out), then checked as every candidate
    /// (`acceptOutline`) with confidence `mapsAloneConfidence`: the frame's edges do not confirm it.
    func considerOutlineOnMapsAlone(
        _ region: RegionExtractor.Region, of extractor: RegionExtractor, maps: SegmentationMaps,
        minimumSidePx: Double
    ) {
        guard let segmenter else { return }
        let grid = segmenter.grid
        let c = Double(grid.cellPx)
        let p = learnedParameters
        func reject(_ why: @autoclosure () -> String) { traceRegion("maps alone", region, why()) }
        guard let start = unplacedStart(region, of: extractor, reject: reject) else { return }
        guard
            let quad = mapOutline.fit(
                start, maps: maps, grid: grid, reading: .edgeRidge, reachCells: p.mapsAloneReachCells)
        else { reject("no outline on the edge map"); return }
        let inside = pointsTheSegmenterSeesInside(quad, maps)
        guard inside == 25 else { reject("the segmenter sees paper at \(inside) of 25 points inside"); return }
        guard let around = quad.offsettingSides(byPx: 2 * c) else { reject("no outline around it"); return }
        let paperAround = pointsTheSegmenterSeesBetween(quad, and: around, maps)
        guard 4 * paperAround < 28 else { reject("paper at \(paperAround) of 28 points around it"); return }
        acceptOutline(
            quad.canonicallyOrdered(), support: p.mapsAloneConfidence, minimumSidePx: minimumSidePx, reject: reject)
    }

    /// The quad of `region` (the frame grid's, of `extractor`) grown to where the paper's edge should be
    /// (`coarseOutline`; clockwise on screen, as the hull it is fitted on), or nil (told to `reject`) when it has
    /// none or its centre lies in an outline already placed.
    private func unplacedStart(
        _ region: RegionExtractor.Region, of extractor: RegionExtractor,
        reject: (@autoclosure () -> String) -> Void
    ) -> Quad? {
        guard let segmenter else { return nil }
        let c = Double(segmenter.grid.cellPx)
        let hull = extractor.hullPoints[region.hullStart..<(region.hullStart + region.hullCount)]
        guard
            let start = coarseOutline(
                region, hull: hull, scale: c, offsetPx: learnedParameters.outlineOffsetCells * c, reject: reject)
        else { return nil }
        let centre = start.centroid
        for kept in candidates where kept.quad.contains(centre) { reject("dup of earlier pass"); return nil }
        return start
    }

    /// Traces `why` for the frame grid's `region`, named by `step` and its box in frame pixels.
    private func traceRegion(_ step: String, _ region: RegionExtractor.Region, _ why: @autoclosure () -> String) {
        guard let trace, let cellPx = segmenter?.grid.cellPx else { return }
        trace(
            "\(step) x \(region.minX * cellPx)...\(region.maxX * cellPx) y \(region.minY * cellPx)...\(region.maxY * cellPx): \(why())"
        )
    }
}
