/// Splits a segmenter region that holds several prints — prints overlapping or touching where the edge map left a
/// gap, so their interiors joined through a neck — into one group of cells per print.
///
/// Each cell's chessboard distance to the region's outside is computed, where a cell on a faint edge line
/// (`edgeThreshold`, below the foreground's own) counts as outside too. The cores are the connected groups of cells
/// at least `r` cells deep, for the smallest `r` (1…`maximumDepthCells`) that leaves two or more cores of at least
/// `minimumCoreCells`; the region's cells are then handed out to the nearest core (breadth-first over the region,
/// 8-connected, so the cut falls along the neck). A region that never splits gives no groups. Which `r` that is
/// comes from one union–find pass over the depths, deepest first, so only the chosen depth is labelled (a print that
/// does not split costs one pass, not one labelling per depth).
///
/// Units: grid cells, row-major, `widthCells` per row. Ownership: buffers are allocated once in `init` for one
/// grid. Threading: one thread at a time; `split` allocates nothing.
final class RegionSplitter {
    struct Parameters {
        /// A cell whose edge probability reaches this counts as outside the region (the foreground's own cut is 0.5).
        var edgeThreshold: Float = 0.25
        /// The deepest erosion tried.
        var maximumDepthCells = 4
        /// A core smaller than this is noise, not a print.
        var minimumCoreCells = 4
    }

    let widthCells: Int
    let heightCells: Int
    var parameters = Parameters()
    /// After `split`: per cell the group it went to (0 up to the count `split` returned), or -1.
    let cellLabels: UnsafeMutablePointer<Int32>
    private let depth: UnsafeMutablePointer<Int32>
    private let queue: UnsafeMutablePointer<Int32>

    init(widthCells: Int, heightCells: Int) {
        self.widthCells = widthCells
        self.heightCells = heightCells
        let count = max(1, widthCells * heightCells)
        cellLabels = .allocate(capacity: count)
        cellLabels.initialize(repeating: -1, count: count)
        depth = .allocate(capacity: count)
        depth.initialize(repeating: 0, count: count)
        queue = .allocate(capacity: count)
        queue.initialize(repeating: 0, count: count)
    }

    deinit {
        cellLabels.deallocate()
        depth.deallocate()
        queue.deallocate()
    }

    /// Splits the cells `inRegion` says belong to the region (within the box `minX…maxX`, `minY…maxY`, inclusive),
    /// `edge` being the maps' edge plane (`edgeRowStride` floats per row). Returns the number of groups: 0 when the
    /// region does not split, else ≥ 2, with `cellLabels` holding each cell's group.
    func split(
        minX: Int, minY: Int, maxX: Int, maxY: Int, edge: UnsafePointer<Float>, edgeRowStride: Int,
        inRegion: (Int) -> Bool
    ) -> Int {
        let w = widthCells, p = parameters
        for k in 0..<(w * heightCells) { cellLabels[k] = -1 }  // outside the box: no group, whatever a split left
        @inline(__always) func clearBox() {
            for y in minY...maxY { for x in minX...maxX { cellLabels[y * w + x] = -1 } }
        }
        // Depth: 1 inside the region (off faint edges), 0 elsewhere; then the chessboard distance, two passes.
        for y in minY...maxY {
            for x in minX...maxX {
                let k = y * w + x
                depth[k] = inRegion(k) && edge[y * edgeRowStride + x] < p.edgeThreshold ? 1 : 0
            }
        }
        @inline(__always) func at(_ x: Int, _ y: Int) -> Int32 {
            x < minX || x > maxX || y < minY || y > maxY ? 0 : depth[y * w + x]
        }
        for y in minY...maxY {
            for x in minX...maxX where depth[y * w + x] > 0 {
                let m = min(at(x - 1, y), at(x - 1, y - 1), at(x, y - 1), at(x + 1, y - 1))
                depth[y * w + x] = m + 1
            }
        }
        for y in stride(from: maxY, through: minY, by: -1) {
            for x in stride(from: maxX, through: minX, by: -1) where depth[y * w + x] > 0 {
                let m = min(at(x + 1, y), at(x + 1, y + 1), at(x, y + 1), at(x - 1, y + 1))
                depth[y * w + x] = min(depth[y * w + x], m + 1)
            }
        }
        // The smallest depth that leaves two cores, found in one pass (`smallestSplittingDepth`); only that depth is
        // labelled.
        guard let r = smallestSplittingDepth(minX: minX, minY: minY, maxX: maxX, maxY: maxY) else {
            clearBox()
            return 0
        }
        let cores = labelCores(depthAtLeast: Int32(r) + 1, minX: minX, minY: minY, maxX: maxX, maxY: maxY)
        assert(cores >= 2, "RegionSplitter: depth \(r) counted two cores, labelled \(cores)")
        guard cores >= 2 else {
            clearBox()
            return 0
        }
        grow(cores: cores, minX: minX, minY: minY, maxX: maxX, maxY: maxY, inRegion: inRegion)
        return cores
    }

    /// The smallest `r` in 1…`maximumDepthCells` for which the cells at least `r` + 1 deep (`depth`, within the box)
    /// form two or more 8-connected groups of at least `minimumCoreCells`, or nil. One pass instead of a labelling per
    /// depth: cells are added deepest first into a union–find by size, and the number of groups that large is read as
    /// each depth is completed. `cellLabels` holds the union–find's parents (-1: not added) and `queue` the sizes of
    /// its roots; every `cellLabels` in the box is -1 again on return.
    private func smallestSplittingDepth(minX: Int, minY: Int, maxX: Int, maxY: Int) -> Int? {
        let w = widthCells, big = parameters.minimumCoreCells
        let deepestAsked = Int32(max(1, parameters.maximumDepthCells) + 1)
        var deepestSeen: Int32 = 0
        for y in minY...maxY { for x in minX...maxX { deepestSeen = max(deepestSeen, depth[y * w + x]) } }
        guard deepestSeen >= 2 else { return nil }
        @inline(__always) func root(_ k: Int) -> Int {
            var k = k
            while Int(cellLabels[k]) != k {
                let up = Int(cellLabels[k])
                cellLabels[k] = cellLabels[up]  // path halving
                k = up
            }
            return k
        }
        var large = 0  // groups of at least `big` cells
        var found: Int?
        // The first level takes every cell at least that deep; each later one the cells of exactly its depth.
        var level = min(deepestSeen, deepestAsked)
        var first = true
        while level >= 2 {
            for y in minY...maxY {
                for x in minX...maxX {
                    let k = y * w + x
                    guard first ? depth[k] >= level : depth[k] == level else { continue }
                    cellLabels[k] = Int32(k)
                    queue[k] = 1
                    if big <= 1 { large += 1 }
                    for ny in max(minY, y - 1)...min(maxY, y + 1) {
                        for nx in max(minX, x - 1)...min(maxX, x + 1) {
                            let n = ny * w + nx
                            guard n != k, cellLabels[n] >= 0 else { continue }
                            let a = root(k), b = root(n)
                            if a == b { continue }
                            let sa = Int(queue[a]), sb = Int(queue[b])
                            large -= (sa >= big ? 1 : 0) + (sb >= big ? 1 : 0)
                            let (absorbed, kept) = sa < sb ? (a, b) : (b, a)
                            cellLabels[absorbed] = Int32(kept)
                            queue[kept] = Int32(sa + sb)
                            large += sa + sb >= big ? 1 : 0
                        }
                    }
                }
            }
            if large >= 2 { found = Int(level) - 1 }  // levels go down: the last found is the smallest r
            first = false
            level -= 1
        }
        for y in minY...maxY { for x in minX...maxX { cellLabels[y * w + x] = -1 } }
        return found
    }

    /// Labels the 8-connected groups of cells at least `d` deep into `cellLabels`, dropping (back to -1) those
    /// smaller than `minimumCoreCells`. Returns how many were kept (labels 0..<n).
    private func labelCores(depthAtLeast d: Int32, minX: Int, minY: Int, maxX: Int, maxY: Int) -> Int {
        let w = widthCells
        var kept: Int32 = 0
        for y in minY...maxY {
            for x in minX...maxX {
                let start = y * w + x
                guard depth[start] >= d, cellLabels[start] == -1 else { continue }
                cellLabels[start] = kept
                queue[0] = Int32(start)
                var head = 0, tail = 1
                while head < tail {
                    let k = Int(queue[head]); head += 1
                    let cy = k / w, cx = k - cy * w
                    for ny in max(minY, cy - 1)...min(maxY, cy + 1) {
                        for nx in max(minX, cx - 1)...min(maxX, cx + 1) {
                            let n = ny * w + nx
                            if depth[n] >= d, cellLabels[n] == -1 {
                                cellLabels[n] = kept
                                queue[tail] = Int32(n); tail += 1
                            }
                        }
                    }
                }
                if tail >= parameters.minimumCoreCells {
                    kept += 1
                } else {
                    for q in 0..<tail { cellLabels[Int(queue[q])] = -2 }  // too small: not a core, not revisited
                }
            }
        }
        for y in minY...maxY { for x in minX...maxX where cellLabels[y * w + x] == -2 { cellLabels[y * w + x] = -1 } }
        return Int(kept)
    }

    /// Hands every cell of the region to the nearest core: a breadth-first growth from all cores at once.
    private func grow(cores: Int, minX: Int, minY: Int, maxX: Int, maxY: Int, inRegion: (Int) -> Bool) {
        let w = widthCells
        var tail = 0
        for y in minY...maxY {
            for x in minX...maxX where cellLabels[y * w + x] >= 0 {
                queue[tail] = Int32(y * w + x); tail += 1
            }
        }
        var head = 0
        while head < tail {
            let k = Int(queue[head]); head += 1
            let label = cellLabels[k]
            let cy = k / w, cx = k - cy * w
            for ny in max(minY, cy - 1)...min(maxY, cy + 1) {
                for nx in max(minX, cx - 1)...min(maxX, cx + 1) {
                    let n = ny * w + nx
                    if cellLabels[n] == -1, inRegion(n) {
                        cellLabels[n] = label
                        queue[tail] = Int32(n); tail += 1
                    }
                }
            }
        }
    }
}
