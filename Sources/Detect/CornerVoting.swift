/// Turns a segmenter's per-cell corner predictions (`SegmentationMaps.corners`) into one coarse quad per print.
///
/// Every cell inside a print (interior ≥ threshold, edge below its threshold) predicts the whole outline of the print
/// it lies in, hidden corners included. The cells of one print agree on its centre, so the centres are voted on the
/// grid; each peak gathers the cells whose centres lie near it, their outlines are put in one corner order and
/// averaged (twice, the second time down-weighting outlines far from the first mean). Prints that touch or overlap,
/// or that a hand cuts in two, need no rule of their own: their cells vote for different centres, or for the same
/// one.
///
/// Units: grid cells; a cell `(i, j)`'s centre is `(i + 0.5, j + 0.5)`, so a quad in cells × `SegmentationGrid.cellPx`
/// is in frame pixels. Ownership: buffers are allocated once in `init` for one grid; `quads` is reused between calls.
/// Threading: one thread at a time; `decode` allocates nothing once `quads` has grown.
final class CornerVoting {
    struct Parameters {
        var interiorThreshold: Float = 0.5
        var edgeThreshold: Float = 0.5
        /// A cell's centre belongs to a peak when it lies within this many cells of it.
        var gatherRadiusCells: Float = 4
        /// A print needs at least this many cells …
        var minimumCells = 6
        /// … and at least this fraction of its quad's area (clipped to the grid) in cells that voted for it.
        var minimumCellFraction: Float = 0.2
    }

    struct Voted {
        /// The outline, grid cells, clockwise on screen.
        var quad: Quad
        /// Cells that voted for it.
        var cells: Int
    }

    let widthCells: Int
    let heightCells: Int
    /// Frame pixels per cell.
    let cellPx: Int
    var parameters = Parameters()
    private(set) var quads: [Voted] = []
    /// Per grid cell (row-major, `widthCells` per row): the index in `quads` of the print whose outline it voted
    /// for, or -1.
    let cellLabels: UnsafeMutablePointer<Int32>
    /// Per voting cell: its index in the grid.
    private let memberCells: UnsafeMutablePointer<Int32>
    /// Per voting cell: its outline (8 floats, cells) and its centre (2 floats); `memberCount` of them.
    private let outlines: UnsafeMutablePointer<Float>
    private let centres: UnsafeMutablePointer<Float>
    private let taken: UnsafeMutablePointer<Bool>
    private var memberCount = 0
    /// Votes per cell, and their 3 × 3 sums.
    private let votes: UnsafeMutablePointer<Int32>
    private let scores: UnsafeMutablePointer<Int32>
    private var peaks: [Int] = []

    init(widthCells: Int, heightCells: Int, cellPx: Int) {
        self.widthCells = widthCells
        self.heightCells = heightCells
        self.cellPx = cellPx
        let count = max(1, widthCells * heightCells)
        outlines = .allocate(capacity: 8 * count)
        outlines.initialize(repeating: 0, count: 8 * count)
        centres = .allocate(capacity: 2 * count)
        centres.initialize(repeating: 0, count: 2 * count)
        taken = .allocate(capacity: count)
        taken.initialize(repeating: false, count: count)
        cellLabels = .allocate(capacity: count)
        cellLabels.initialize(repeating: -1, count: count)
        memberCells = .allocate(capacity: count)
        memberCells.initialize(repeating: 0, count: count)
        votes = .allocate(capacity: count)
        votes.initialize(repeating: 0, count: count)
        scores = .allocate(capacity: count)
        scores.initialize(repeating: 0, count: count)
        quads.reserveCapacity(32)
        peaks.reserveCapacity(64)
    }

    deinit {
        outlines.deallocate()
        centres.deallocate()
        taken.deallocate()
        cellLabels.deallocate()
        memberCells.deallocate()
        votes.deallocate()
        scores.deallocate()
    }

    /// Decodes `maps` (which must carry corner planes) into `quads`, most cells first, from the cells inside a
    /// print for which `includes(cellIndex)` (row-major, `widthCells` per row) holds.
    func decode(_ maps: SegmentationMaps, includes: (Int) -> Bool = { _ in true }) {
        quads.removeAll(keepingCapacity: true)
        peaks.removeAll(keepingCapacity: true)
        guard let corners = maps.corners, widthCells >= 3, heightCells >= 3 else { return }
        let w = widthCells, h = heightCells, p = parameters
        for k in 0..<(w * h) { votes[k] = 0; cellLabels[k] = -1 }
        memberCount = 0
        // The cells that received votes lie in this box; scores and peaks are looked for only there (grown by one).
        var minVX = w, minVY = h, maxVX = -1, maxVY = -1
        for j in 0..<h {
            for i in 0..<w {
                let at = j * maps.rowStride + i
                guard maps.interior[at] >= p.interiorThreshold, maps.edge[at] < p.edgeThreshold, includes(j * w + i)
                else { continue }
                let m = memberCount, out = outlines + 8 * m
                var cx: Float = 0, cy: Float = 0
                for c in 0..<4 {
                    out[2 * c] = Float(i) + 0.5 + corners[2 * c * maps.planeStride + at]
                    out[2 * c + 1] = Float(j) + 0.5 + corners[(2 * c + 1) * maps.planeStride + at]
                    cx += out[2 * c]; cy += out[2 * c + 1]
                }
                centres[2 * m] = cx / 4; centres[2 * m + 1] = cy / 4
                taken[m] = false
                memberCells[m] = Int32(j * w + i)
                memberCount += 1
                let vi = Int((cx / 4).rounded(.down)), vj = Int((cy / 4).rounded(.down))
                if vi >= 0, vi < w, vj >= 0, vj < h {
                    votes[vj * w + vi] += 1
                    minVX = min(minVX, vi); maxVX = max(maxVX, vi); minVY = min(minVY, vj); maxVY = max(maxVY, vj)
                }
            }
        }
        guard maxVX >= 0 else { return }
        // 3 × 3 sums, then local maxima (ties go to the earlier cell), strongest first. Outside the voted box grown
        // by one cell every sum is 0, below `minimumCells`: peaks are looked for there, and the sums are computed
        // one cell further so that every neighbour a peak is compared with is this call's.
        let x0 = max(0, minVX - 2), x1 = min(w - 1, maxVX + 2), y0 = max(0, minVY - 2), y1 = min(h - 1, maxVY + 2)
        for j in y0...y1 {
            for i in x0...x1 {
                var sum: Int32 = 0
                for dj in max(0, j - 1)...min(h - 1, j + 1) {
                    for di in max(0, i - 1)...min(w - 1, i + 1) { sum += votes[dj * w + di] }
                }
                scores[j * w + i] = sum
            }
        }
        for j in max(0, minVY - 1)...min(h - 1, maxVY + 1) {
            for i in max(0, minVX - 1)...min(w - 1, maxVX + 1) where scores[j * w + i] >= Int32(p.minimumCells) {
                let s = scores[j * w + i]
                var isPeak = true
                for dj in max(0, j - 1)...min(h - 1, j + 1) where isPeak {
                    for di in max(0, i - 1)...min(w - 1, i + 1) where di != i || dj != j {
                        let other = scores[dj * w + di]
                        if other > s || (other == s && dj * w + di < j * w + i) { isPeak = false; break }
                    }
                }
                if isPeak { peaks.append(j * w + i) }
            }
        }
        sortPeaksByScore()
        for peak in peaks {
            let px = Float(peak % w) + 0.5, py = Float(peak / w) + 0.5
            if let voted = gather(aroundX: px, y: py) { quads.append(voted) }
        }
    }

    /// Gathers the untaken cells whose centres lie near `(x, y)` (re-centred once on their mean), averages their
    /// outlines and marks them taken, labelling them in `cellLabels` with the next index of `quads`; nil (cells
    /// taken but not labelled) when too few cells agree.
    private func gather(aroundX x0: Float, y y0: Float) -> Voted? {
        let r2 = parameters.gatherRadiusCells * parameters.gatherRadiusCells
        var x = x0, y = y0
        for _ in 0..<2 {  // the peak cell's centre, then the gathered centres' mean
            var sx: Float = 0, sy: Float = 0, n: Float = 0
            for m in 0..<memberCount where !taken[m] {
                let dx = centres[2 * m] - x, dy = centres[2 * m + 1] - y
                if dx * dx + dy * dy <= r2 { sx += centres[2 * m]; sy += centres[2 * m + 1]; n += 1 }
            }
            guard n > 0 else { return nil }
            x = sx / n; y = sy / n
        }
        // The reference outline: the member whose centre is nearest the mean.
        var reference = -1, best = Float.infinity, count = 0
        for m in 0..<memberCount where !taken[m] {
            let dx = centres[2 * m] - x, dy = centres[2 * m + 1] - y, d = dx * dx + dy * dy
            guard d <= r2 else { continue }
            count += 1
            if d < best { best = d; reference = m }
        }
        guard count >= parameters.minimumCells, reference >= 0 else { return nil }
        var start = SIMD8<Float>(repeating: 0)
        for k in 0..<8 { start[k] = outlines[8 * reference + k] }
        var mean = average(near: x, y, radius2: r2, reference: start, weightedFrom: nil)
        mean = average(near: x, y, radius2: r2, reference: mean, weightedFrom: mean)
        let quad = Quad(
            PixelPoint(Double(mean[0]), Double(mean[1])), PixelPoint(Double(mean[2]), Double(mean[3])),
            PixelPoint(Double(mean[4]), Double(mean[5])), PixelPoint(Double(mean[6]), Double(mean[7])))
        let accepted = Float(count) >= parameters.minimumCellFraction * Float(clippedAreaCells(quad))
        let label = Int32(quads.count)
        for m in 0..<memberCount where !taken[m] {
            let dx = centres[2 * m] - x, dy = centres[2 * m + 1] - y
            guard dx * dx + dy * dy <= r2 else { continue }
            taken[m] = true
            if accepted { cellLabels[Int(memberCells[m])] = label }
        }
        return accepted ? Voted(quad: quad, cells: count) : nil
    }

    /// The mean of the gathered members' outlines, each first turned to the corner order nearest `reference`;
    /// with `weightedFrom`, each weighted 1 / (1 + d²/4), d its mean corner distance (cells) from that outline.
    private func average(
        near x: Float, _ y: Float, radius2 r2: Float, reference: SIMD8<Float>,
        weightedFrom centre: SIMD8<Float>?
    ) -> SIMD8<Float> {
        var sum = SIMD8<Float>(repeating: 0), total: Float = 0
        for m in 0..<memberCount where !taken[m] {
            let dx = centres[2 * m] - x, dy = centres[2 * m + 1] - y
            guard dx * dx + dy * dy <= r2 else { continue }
            let o = outlines + 8 * m
            var outline = SIMD8<Float>(o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7])
            var bestShift = 0, bestDistance = Float.infinity
            for shift in 0..<4 {
                var d: Float = 0
                for c in 0..<4 {
                    let s = (c + shift) % 4
                    let ex = outline[2 * s] - reference[2 * c], ey = outline[2 * s + 1] - reference[2 * c + 1]
                    d += ex * ex + ey * ey
                }
                if d < bestDistance { bestDistance = d; bestShift = shift }
            }
            if bestShift != 0 {
                let copy = outline
                for c in 0..<4 {
                    let s = (c + bestShift) % 4
                    outline[2 * c] = copy[2 * s]; outline[2 * c + 1] = copy[2 * s + 1]
                }
            }
            var weight: Float = 1
            if let centre {
                var d: Float = 0
                for c in 0..<4 {
                    let ex = outline[2 * c] - centre[2 * c], ey = outline[2 * c + 1] - centre[2 * c + 1]
                    d += (ex * ex + ey * ey).squareRoot()
                }
                d /= 4
                weight = 1 / (1 + d * d / 4)
            }
            sum += outline * weight
            total += weight
        }
        return total > 0 ? sum / total : reference
    }

    /// The quad's area inside the grid, cells²: its area times the share of an 8 × 8 lattice of points spread over
    /// it (bilinearly between its sides) that lie inside [0, w] × [0, h].
    private func clippedAreaCells(_ quad: Quad) -> Double {
        var inside = 0
        let w = Double(widthCells), h = Double(heightCells)
        for a in 0..<8 {
            let u = (Double(a) + 0.5) / 8
            let top = quad[0] + (quad[1] - quad[0]) * u, bottom = quad[3] + (quad[2] - quad[3]) * u
            for b in 0..<8 {
                let p = top + (bottom - top) * ((Double(b) + 0.5) / 8)
                if p.x >= 0, p.x <= w, p.y >= 0, p.y <= h { inside += 1 }
            }
        }
        return abs(quad.area) * Double(inside) / 64
    }

    /// Sorts `peaks` by score, highest first, in place (insertion sort: there are few).
    private func sortPeaksByScore() {
        let scores = self.scores
        peaks.withUnsafeMutableBufferPointer { insertionSort($0) { scores[$0] > scores[$1] } }
    }
}
