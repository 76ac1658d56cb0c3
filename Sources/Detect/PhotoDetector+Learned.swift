import ColorcamCore

extension PhotoDetector {
    /// The learned pass: the segmenter's maps for `frame` → foreground cells (inside a print and not on an edge, so
    /// an edge line separates prints whose interiors touch) → 8-connected regions, opened → each region's hull
    /// placed by `considerRegion` like a classic region's, its quad first grown out to where the paper's edge should
    /// be (`LearnedRegionParameters`). With corner planes, a region that is not placed is split by the outlines its
    /// cells predict (`considerVotedPrints`); one still not placed is split where it narrows (`considerSplitRegion`:
    /// prints joined through an overlap the edge map left open; a region placed as one print is split too, its parts
    /// replacing an outline across two of them only when each is better supported), then tried from the quad
    /// enclosing its hull (a print partly under another, `considerEnclosingOutline`), then on the interior map
    /// (`considerMapOutline`), then, after a close look, on the maps alone (`considerOutlineOnMapsAlone`).
    ///
    /// Runs on the caller's thread; allocates nothing once the region lists have grown. The regions are
    /// `extractLearnedRegions`'s, from the same maps.
    func considerLearnedRegions(
        _ maps: SegmentationMaps, frame: FrameBuffer, sampler: PlaneSampler, minimumSidePx: Double
    ) {
        guard let segmenter, let learnedRegions else { return }
        let grid = segmenter.grid
        guard grid.widthCells >= 3, grid.heightCells >= 3 else { return }
        let p = learnedParameters
        let c = Double(grid.cellPx)
        trace?("learned: \(learnedRegions.regions.count) regions")
        for region in learnedRegions.regions {
            let before = candidates.count
            considerRegion(
                region, of: learnedRegions, sampler: sampler, scale: c, search: regionSearch(p, c),
                minimumSidePx: minimumSidePx, enclosingEarlier: p.replacesEnclosedOutlines,
                outsupportingFirst: mode == .both && !p.learnedFirst)
            // A region inside an outline already placed is that print: no other quad for it is worth fitting.
            let duplicate = lastRegionWasDuplicate
            if candidates.count == before, maps.corners != nil {
                considerVotedPrints(in: region, maps: maps, sampler: sampler, minimumSidePx: minimumSidePx)
            }
            if p.splitsJoinedRegions {
                // Placed as one print: split only to replace an outline across two of its parts. Not placed, also
                // when its centre lies in an outline already placed (a region of two prints, one of them placed):
                // each part is placed, the part on that print being its duplicate.
                let placedAlready = candidates.count > before
                considerSplitRegion(
                    region, maps: maps, sampler: sampler, minimumSidePx: minimumSidePx,
                    onlyOverASpanningOutline: placedAlready)
            }
            if candidates.count == before, p.usesEnclosingQuads, !duplicate {
                considerEnclosingOutline(
                    region, of: learnedRegions, maps: maps, sampler: sampler, scale: c, search: regionSearch(p, c),
                    minimumSidePx: minimumSidePx)
            }
            if candidates.count == before, p.usesMapOutlines {
                considerMapOutline(
                    region, of: learnedRegions, maps: maps, sampler: sampler, minimumSidePx: minimumSidePx)
            }
            if p.usesCloseLook, closeLook != nil {
                lookCloser(at: region, frame: frame, sampler: sampler, minimumSidePx: minimumSidePx)
            }
            if candidates.count == before, p.placesOnMapsAlone, !duplicate {
                considerOutlineOnMapsAlone(region, of: learnedRegions, maps: maps, minimumSidePx: minimumSidePx)
            }
        }
    }

    /// The frame grid's learned regions (`learnedRegions`): the foreground of `maps` (`markForeground`), labelled
    /// 8-connected, regions narrower than 0.8 × `minimumSidePx` left out. Before either pass, so that both the
    /// learned pass and the checks on classic outlines (`droppingCandidatesAcrossRegions`) see them.
    func extractLearnedRegions(_ maps: SegmentationMaps, minimumSidePx: Double) {
        guard let segmenter, let learnedRegions, let foreground else { return }
        let grid = segmenter.grid
        guard grid.widthCells >= 3, grid.heightCells >= 3 else { return }
        markForeground(maps, grid, into: foreground)
        learnedRegions.extract(
            foreground: foreground, minimumSidePx: max(3, Int(minimumSidePx / Double(grid.cellPx) * 0.8)),
            openingRadius: learnedParameters.openingRadiusCells)
    }

    /// The foreground of `maps` on `grid` (its cells, row by row, into `out`): 1 where a cell is inside a print
    /// (interior ≥ `interiorThreshold`) and not on an edge (edge < `edgeThreshold`), so an edge line separates prints
    /// whose interiors touch; 0 elsewhere. The frame's maps and a close look's window alike.
    func markForeground(_ maps: SegmentationMaps, _ grid: SegmentationGrid, into out: UnsafeMutablePointer<UInt8>) {
        let p = learnedParameters
        for j in 0..<grid.heightCells {
            let interior = maps.interior + j * maps.rowStride, edge = maps.edge + j * maps.rowStride
            let row = out + j * grid.widthCells
            for i in 0..<grid.widthCells {
                row[i] = interior[i] >= p.interiorThreshold && edge[i] < p.edgeThreshold ? 1 : 0
            }
        }
    }

    /// A region that could not be placed as one print (prints touching or overlapping that the edge map did not
    /// separate, a print and a hand's shadow, …): its cells grouped by the outline they predict (`CornerVoting`),
    /// each group's hull placed as a region.
    private func considerVotedPrints(
        in region: RegionExtractor.Region, maps: SegmentationMaps, sampler: PlaneSampler,
        minimumSidePx: Double
    ) {
        guard let learnedRegions, let cornerVoting, let voteGroups else { return }
        let c = Double(cornerVoting.cellPx)
        cornerVoting.decode(maps) { learnedRegions.contains(region, pixel: $0) }
        guard cornerVoting.quads.count > 1 || cornerVoting.quads.first?.cells != region.pixelCount else { return }
        voteGroups.extract(
            labels: cornerVoting.cellLabels, labelCount: cornerVoting.quads.count,
            minimumSidePx: max(3, Int(minimumSidePx / c * 0.8)))
        trace?("region split by votes: \(cornerVoting.quads.count) outlines, \(voteGroups.regions.count) groups")
        for group in voteGroups.regions {
            considerRegion(
                group, of: voteGroups, sampler: sampler, scale: c, search: regionSearch(learnedParameters, c),
                minimumSidePx: minimumSidePx)
        }
    }

    /// A region that could not be placed as one print, split where it narrows (`RegionSplitter`: prints overlapping
    /// or touching whose interiors the edge map did not separate): each part placed as a region, then, if that
    /// fails, from the quad enclosing it (the lower of two overlapping prints has its hidden corner cut off).
    /// `onlyOverASpanningOutline` (the region was placed as one print): the parts are placed only where an outline
    /// holds two of them, and replace it only as described below.
    private func considerSplitRegion(
        _ region: RegionExtractor.Region, maps: SegmentationMaps, sampler: PlaneSampler, minimumSidePx: Double,
        onlyOverASpanningOutline: Bool
    ) {
        guard let learnedRegions, let regionSplitter, let voteGroups, let segmenter else { return }
        let c = Double(segmenter.grid.cellPx)
        let groups = regionSplitter.split(
            minX: region.minX, minY: region.minY, maxX: region.maxX, maxY: region.maxY, edge: maps.edge,
            edgeRowStride: maps.rowStride
        ) { learnedRegions.contains(region, pixel: $0) }
        guard groups >= 2 else { return }
        voteGroups.extract(
            labels: regionSplitter.cellLabels, labelCount: groups,
            minimumSidePx: max(3, Int(minimumSidePx / c * 0.8)))
        trace?("region split where it narrows: \(groups) parts, \(voteGroups.regions.count) large enough")
        // An outline already placed over two or more of the parts (a classic pass takes two overlapping prints for
        // one) would make each part its duplicate: it steps aside while the parts are placed, and comes back unless
        // two of them are, each better supported than it (else the parts are pieces of one print, cut by a line in
        // its picture).
        let spanningIndex = candidates.firstIndex {
            regionsHeld(by: $0.quad, voteGroups.regions, cellPx: c, minimumCells: 0) >= 2
        }
        if onlyOverASpanningOutline, spanningIndex == nil { return }
        let spanning = spanningIndex.map { candidates.remove(at: $0) }
        let spanningWasFirstPass = spanningIndex.map { $0 < firstPassCount } ?? false
        if spanningWasFirstPass { firstPassCount -= 1 }
        let partsStart = candidates.count
        let search = regionSearch(learnedParameters, c)
        for part in voteGroups.regions {
            let before = candidates.count
            considerRegion(
                part, of: voteGroups, sampler: sampler, scale: c, search: search, minimumSidePx: minimumSidePx)
            if candidates.count == before, learnedParameters.usesEnclosingQuads, !lastRegionWasDuplicate {
                considerEnclosingOutline(
                    part, of: voteGroups, maps: maps, sampler: sampler, scale: c, search: search,
                    minimumSidePx: minimumSidePx)
            }
            // A part is a print only where its edges are clear and the table lies around most of it: a part with
            // paper on three quarters of its outside is a piece of a print (cut by a line in its picture).
            guard candidates.count > before, let around = candidates[before].quad.offsettingSides(byPx: 2 * c) else {
                continue
            }
            let paperAround = pointsTheSegmenterSeesBetween(candidates[before].quad, and: around, maps)
            let confidence = candidates[before].confidence
            if 4 * paperAround >= 3 * 28 || confidence < learnedParameters.splitPartMinimumConfidence {
                trace?("split part dropped: confidence \(confidence), paper at \(paperAround) of 28 points around it")
                candidates.removeLast(candidates.count - before)
            }
        }
        guard let spanning, let spanningIndex else { return }
        let partsPlaced = candidates[partsStart...]
        if partsPlaced.count >= 2, partsPlaced.allSatisfy({ $0.confidence > spanning.confidence }) {
            trace?("dropped (it spans \(candidates.count - partsStart) parts placed as prints): \(spanning.quad)")
            return
        }
        candidates.removeLast(candidates.count - partsStart)
        candidates.insert(spanning, at: spanningIndex)
        if spanningWasFirstPass { firstPassCount += 1 }
    }

    /// How many of `regions` (cells of `cellPx` frame pixels), each of at least `minimumCells` cells, have their box's
    /// centre inside `quad`: an outline holding two spans several prints.
    private func regionsHeld(
        by quad: Quad, _ regions: [RegionExtractor.Region], cellPx c: Double, minimumCells: Double
    ) -> Int {
        var held = 0
        for region in regions where Double(region.pixelCount) >= minimumCells {
            let centre = PixelPoint(
                Double(region.minX + region.maxX + 1) * c / 2, Double(region.minY + region.maxY + 1) * c / 2)
            if quad.contains(centre) { held += 1 }
        }
        return held
    }

    /// Where a learned region's edges are searched (`p` in cells, `c` frame pixels per cell).
    func regionSearch(_ p: LearnedRegionParameters, _ c: Double) -> RegionSearch {
        RegionSearch(
            outlineOffsetPx: p.outlineOffsetCells * c, inwardPx: p.searchInwardCells * c,
            outwardPx: p.searchOutwardCells * c, wideInwardPx: p.wideSearchInwardCells * c,
            wideOutwardPx: p.wideSearchOutwardCells * c, maximumCornerShiftPx: p.maximumCornerShiftCells * c)
    }

    /// `both` mode: drops the candidates in `range` (the classic passes') that the segmenter does not see
    /// as a print — fewer than half of 25 points inside (`pointsTheSegmenterSeesInside`). The edge passes find
    /// outlines in table texture, in a picture's own content and across two prints; the segmenter knows what a
    /// print looks like. In place, without allocating.
    func droppingCandidatesTheSegmenterDoesNotSee(_ maps: SegmentationMaps, in range: Range<Int>) {
        guard segmenter != nil else { return }
        keepingCandidates(in: range) { candidate in
            let inside = pointsTheSegmenterSeesInside(candidate.quad, maps)
            if inside * 2 >= 25 { return true }
            trace?("dropped (the segmenter sees \(inside) of 25 points inside): \(candidate.quad)")
            return false
        }
    }

    /// `both` mode: drops the candidates in `range` (the classic passes') that hold two or more of the
    /// segmenter's print-sized regions (the frame grid's learned regions, each at least `minimumSidePx` square, its
    /// box's centre inside the candidate): the segmenter sees a paper edge through the outline, which therefore spans
    /// several prints (the edge passes join prints lying close, or take one print's side and its neighbour's
    /// corner). In place, without allocating.
    func droppingCandidatesAcrossRegions(in range: Range<Int>, minimumSidePx: Double) {
        guard let segmenter, let extractor = learnedRegions else { return }
        let c = Double(segmenter.grid.cellPx)
        let minimumCells = minimumSidePx * minimumSidePx / (c * c)
        keepingCandidates(in: range) { candidate in
            let held = regionsHeld(by: candidate.quad, extractor.regions, cellPx: c, minimumCells: minimumCells)
            if held < 2 { return true }
            trace?("dropped (it holds \(held) of the segmenter's regions): \(candidate.quad)")
            return false
        }
    }

    /// Keeps the candidates in `range` for which `keep` is true, in order, and every candidate outside it; in place,
    /// without allocating.
    private func keepingCandidates(in range: Range<Int>, where keep: (Observation) -> Bool) {
        var kept = range.lowerBound
        for index in range.lowerBound..<candidates.count where index >= range.upperBound || keep(candidates[index]) {
            candidates[kept] = candidates[index]
            kept += 1
        }
        candidates.removeLast(candidates.count - kept)
    }

    /// A learned region that could not be placed from its hull's largest inscribed quad placed from the smallest
    /// quad enclosing its hull (`EnclosingQuadFitter`): a print with a corner under another print, whose inscribed
    /// quad cuts across it. The hidden part is still paper to the segmenter (its interior is amodal), so the outline
    /// is kept only when the segmenter fills it (all 25 lattice points, `pointsTheSegmenterSeesInside`): one it does
    /// not is a guess beyond the print. `region` and `maps` are the frame grid's.
    func considerEnclosingOutline(
        _ region: RegionExtractor.Region, of extractor: RegionExtractor, maps: SegmentationMaps,
        sampler: PlaneSampler, scale: Double, search: RegionSearch, minimumSidePx: Double
    ) {
        let before = candidates.count
        considerRegion(
            region, of: extractor, sampler: sampler, scale: scale, search: search, minimumSidePx: minimumSidePx,
            enclosing: true)
        guard candidates.count > before, case let seen = pointsTheSegmenterSeesInside(candidates[before].quad, maps),
            seen < 25
        else { return }
        trace?("enclosing outline dropped: the segmenter does not fill it (\(seen) of 25 points)")
        candidates.removeLast(candidates.count - before)
    }

    /// How many of 25 points inside `quad` (a 5 × 5 lattice from 10 % to 90 % of the way between opposite sides) lie
    /// in cells of the frame's maps whose interior probability reaches `interiorThreshold`.
    func pointsTheSegmenterSeesInside(_ quad: Quad, _ maps: SegmentationMaps) -> Int {
        guard let segmenter else { return 0 }
        let grid = segmenter.grid, c = Double(grid.cellPx)
        let threshold = learnedParameters.interiorThreshold
        var inside = 0
        for a in 0..<5 {
            let u = 0.1 + 0.2 * Double(a)
            for b in 0..<5 {
                let v = 0.1 + 0.2 * Double(b)
                let top = quad[0] + (quad[1] - quad[0]) * u, bottom = quad[3] + (quad[2] - quad[3]) * u
                let p = top + (bottom - top) * v
                let i = min(grid.widthCells - 1, max(0, Int(p.x / c)))
                let j = min(grid.heightCells - 1, max(0, Int(p.y / c)))
                if maps.interior[j * maps.rowStride + i] >= threshold { inside += 1 }
            }
        }
        return inside
    }
}
