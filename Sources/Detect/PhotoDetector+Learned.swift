import ColorcamCore

extension PhotoDetector {
    /// The learned pass: the segmenter's maps for `frame` → foreground cells (inside a print and not on an edge, so
    /// an edge line separates prints whose interiors touch) → 8-connected regions, opened → each region's hull
    /// placed by `considerRegion` like a classic region's, its quad first grown out to where the paper's edge should
    /// be (`LearnedRegionParameters`).
    ///
    /// Runs on the caller's thread; allocates nothing once the region lists have grown.
    func considerLearnedRegions(_ frame: FrameBuffer, sampler: PlaneSampler, minimumSidePx: Double) {
        guard let segmenter, let learnedRegions, let foreground else { return }
        let grid = segmenter.grid
        guard grid.widthCells >= 3, grid.heightCells >= 3 else { return }
        let maps = segmenter.segment(frame)
        let p = learnedParameters
        for j in 0..<grid.heightCells {
            let interior = maps.interior + j * maps.rowStride, edge = maps.edge + j * maps.rowStride
            let out = foreground + j * grid.widthCells
            for i in 0..<grid.widthCells {
                out[i] = interior[i] >= p.interiorThreshold && edge[i] < p.edgeThreshold ? 1 : 0
            }
        }
        let c = Double(grid.cellPx)
        learnedRegions.extract(foreground: foreground, minimumSidePx: max(3, Int(minimumSidePx / c * 0.8)),
                               openingRadius: p.openingRadiusCells)
        trace?("learned: \(learnedRegions.regions.count) regions")
        let search = RegionSearch(outlineOffsetPx: p.outlineOffsetCells * c, inwardPx: p.searchInwardCells * c,
                                  outwardPx: p.searchOutwardCells * c, wideInwardPx: p.wideSearchInwardCells * c,
                                  wideOutwardPx: p.wideSearchOutwardCells * c,
                                  maximumCornerShiftPx: p.maximumCornerShiftCells * c)
        for region in learnedRegions.regions {
            considerRegion(region, of: learnedRegions, sampler: sampler, scale: c, search: search,
                           minimumSidePx: minimumSidePx)
        }
    }
}
