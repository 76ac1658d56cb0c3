import ColorcamCore

/// A close look's working memory: regions and the foreground mask on the segmenter's close-look grid
/// (`PrintSegmenter.closeLookGrid`), allocated once with the detector.
final class CloseLookScratch {
    let grid: SegmentationGrid
    let regions: RegionExtractor
    let foreground: UnsafeMutablePointer<UInt8>

    init(grid: SegmentationGrid) {
        self.grid = grid
        regions = RegionExtractor(widthPx: grid.widthCells, heightPx: grid.heightCells)
        foreground = .allocate(capacity: grid.cellCount)
        foreground.initialize(repeating: 0, count: grid.cellCount)
    }

    deinit { foreground.deallocate() }
}

extension PhotoDetector {
    /// A small learned region looked at again closer: the segmenter's maps of a window around it at cells half the
    /// size (`PrintSegmenter.segment(_:windowOriginXPx:windowOriginYPx:)`), so a print under a fifth of the frame is
    /// seen at the scale most training prints have (its interior and edges two frame pixels apart rather than four:
    /// sharper corners, prints lying close together apart). The window's regions whose centres lie in the region's
    /// box are placed as every learned region is (`considerRegion`, cells of the close grid, the window's origin).
    ///
    /// Only where it can pay: the region's box, grown by `closeLookMarginCells`, fits in the window, and no outline
    /// is on it yet or the one there (this region's, or an earlier pass's containing its centre) has confidence
    /// below `closeLookBelowConfidence`. The outline kept is the better supported: the close look's best on the same
    /// print against the one there (a tie keeps the one there); its outlines on other prints are kept as well.
    ///
    /// Runs on the caller's thread; allocates nothing (the candidate list is reserved).
    func lookCloser(
        at region: RegionExtractor.Region, frame: FrameBuffer, sampler: PlaneSampler, minimumSidePx: Double
    ) {
        guard let segmenter, let closeLook else { return }
        let p = learnedParameters
        let c = Double(segmenter.grid.cellPx)
        let window = closeLook.grid
        let cc = Double(window.cellPx)
        let windowWidthPx = window.widthCells * window.cellPx, windowHeightPx = window.heightCells * window.cellPx
        // The region's box in frame pixels, and whether it fits with its margin.
        let minX = Double(region.minX) * c, maxX = Double(region.maxX + 1) * c
        let minY = Double(region.minY) * c, maxY = Double(region.maxY + 1) * c
        let marginPx = p.closeLookMarginCells * c
        guard maxX - minX + 2 * marginPx <= Double(windowWidthPx), maxY - minY + 2 * marginPx <= Double(windowHeightPx)
        else { return }
        let centre = PixelPoint((minX + maxX) / 2, (minY + maxY) / 2)
        let there = candidates.firstIndex { $0.quad.contains(centre) }
        if let there, candidates[there].confidence >= p.closeLookBelowConfidence { return }
        // The window centred on the region, inside the frame, its origin even (whole 4:2:0 chroma samples).
        func origin(_ centrePx: Double, _ windowPx: Int, _ framePx: Int) -> Int {
            let start = min(max(0, Int(centrePx) - windowPx / 2), framePx - windowPx)
            return start / 2 * 2
        }
        let ox = origin(centre.x, windowWidthPx, geometry.widthPx)
        let oy = origin(centre.y, windowHeightPx, geometry.heightPx)
        let maps = segmenter.segment(frame, windowOriginXPx: ox, windowOriginYPx: oy)
        markForeground(maps, window, into: closeLook.foreground)
        closeLook.regions.extract(
            foreground: closeLook.foreground, minimumSidePx: max(3, Int(minimumSidePx / cc * 0.8)),
            openingRadius: p.openingRadiusCells)
        trace?("close look at (\(ox), \(oy)): \(closeLook.regions.regions.count) regions")
        // The outline there steps aside while the close look places its own (else each would be its duplicate).
        var previous: Observation?
        if let there { previous = candidates.remove(at: there) }
        let before = candidates.count
        let originPx = PixelPoint(Double(ox), Double(oy))
        for close in closeLook.regions.regions {
            let x = Double(ox) + Double(close.minX + close.maxX + 1) / 2 * cc
            let y = Double(oy) + Double(close.minY + close.maxY + 1) / 2 * cc
            guard x >= minX, x <= maxX, y >= minY, y <= maxY else { continue }
            considerRegion(
                close, of: closeLook.regions, sampler: sampler, scale: cc, originPx: originPx,
                search: regionSearch(p, cc), minimumSidePx: minimumSidePx)
        }
        guard let previous else { return }
        // Only the close look's outlines on the same print compete with the one there (either holds the other's
        // centre); an outline on a neighbour that the window also showed is kept beside it.
        func samePrint(_ k: Int) -> Bool {
            candidates[k].quad.contains(previous.quad.centroid) || previous.quad.contains(candidates[k].quad.centroid)
        }
        var best = -1.0
        for k in before..<candidates.count where samePrint(k) { best = max(best, candidates[k].confidence) }
        if best > previous.confidence {
            trace?("close look kept over \(previous.quad) (confidence \(previous.confidence) < \(best))")
            return
        }
        var kept = before
        for k in before..<candidates.count where !samePrint(k) {
            candidates[kept] = candidates[k]
            kept += 1
        }
        candidates.removeLast(candidates.count - kept)
        candidates.append(previous)
    }
}
