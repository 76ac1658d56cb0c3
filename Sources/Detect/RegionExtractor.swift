/// Finds closed regions in an edge map: everything the table's background cannot reach from the frame border
/// without crossing an edge. Each such region is a candidate photo; its outline is the outermost edge around it,
/// which for a print with a white border is the print's outer edge, not the picture's.
///
/// Steps: dilate edges (e.g. 3×3: closes 1–2 px gaps) → flood the background from the border (4-connected) → open the
/// rest with a square (5×5 by default) (removes thin structures: a finger's outline, a hand's edge reaching into a print, edge
/// bands left between prints) → label it (8-connected) → per region its pixel count, bounding box and the convex
/// hull of its row extents.
///
/// Ownership: buffers are allocated once in `init` for one coarse size; `regions` and the hull storage are reused
/// (capacity kept) between calls. Threading: one thread at a time.
final class RegionExtractor {
    struct Region {
        /// The label its pixels carry (`contains`); for `extract(labels:…)`, the label given.
        var label: Int32
        var pixelCount: Int
        var minX: Int, minY: Int, maxX: Int, maxY: Int
        /// Range of this region's hull points in `hullPoints` (coarse pixel coordinates, clockwise on screen).
        var hullStart: Int
        var hullCount: Int
    }

    let widthPx: Int
    let heightPx: Int
    /// 0 = unvisited, 1 = background, 2 = barrier (dilated edge), 3+ = region label.
    private let labels: UnsafeMutablePointer<Int32>
    /// Row runs filled by a flood or gathered for a region: (first, last) pixel index pairs, at most one per pixel.
    private let runs: UnsafeMutablePointer<Int32>
    /// Foreground masks for the opening (1 = not background).
    private let mask: UnsafeMutablePointer<UInt8>
    private let maskScratch: UnsafeMutablePointer<UInt8>
    private let columnOnes: UnsafeMutablePointer<Int32>
    /// `columnOnes` in bytes, for windows under 128 rows (the opening's usual radii).
    private let columnOnes8: UnsafeMutablePointer<UInt8>
    private let rowMin: UnsafeMutablePointer<Int32>
    private let rowMax: UnsafeMutablePointer<Int32>
    private(set) var regions: [Region] = []
    private(set) var hullPoints: [PixelPoint] = []
    private var scratch: [PixelPoint] = []
    private var hull = ConvexHull()

    init(widthPx: Int, heightPx: Int) {
        self.widthPx = widthPx
        self.heightPx = heightPx
        let count = widthPx * heightPx
        labels = .allocate(capacity: count)
        runs = .allocate(capacity: 2 * count)
        runs.initialize(repeating: 0, count: 2 * count)
        mask = .allocate(capacity: count)
        maskScratch = .allocate(capacity: count)
        columnOnes = .allocate(capacity: widthPx)
        columnOnes.initialize(repeating: 0, count: widthPx)
        columnOnes8 = .allocate(capacity: widthPx)
        columnOnes8.initialize(repeating: 0, count: widthPx)
        mask.initialize(repeating: 0, count: count)
        maskScratch.initialize(repeating: 0, count: count)
        rowMin = .allocate(capacity: heightPx)
        rowMax = .allocate(capacity: heightPx)
        labels.initialize(repeating: 0, count: count)
        rowMin.initialize(repeating: 0, count: heightPx)
        rowMax.initialize(repeating: 0, count: heightPx)
        regions.reserveCapacity(512)
        hullPoints.reserveCapacity(8192)
        scratch.reserveCapacity(2 * heightPx + 8)
    }

    deinit {
        labels.deallocate()
        runs.deallocate()
        mask.deallocate()
        maskScratch.deallocate()
        columnOnes.deallocate()
        columnOnes8.deallocate()
        rowMin.deallocate()
        rowMax.deallocate()
    }

    /// Extracts the regions enclosed by `edges` whose bounding box is at least `minimumSidePx` on both sides.
    /// - Parameters:
    ///   - dilationRadius: edges are dilated by a (2r+1)² square first; 0 uses them as they are (a 4-connected
    ///     flood cannot cross an 8-connected edge).
    ///   - openingRadius: the foreground is opened with a (2r+1)² square (removes structures thinner than 2r+1).
    func extract(edges: UnsafePointer<UInt8>, minimumSidePx: Int, dilationRadius: Int, openingRadius: Int) {
        regions.removeAll(keepingCapacity: true)
        hullPoints.removeAll(keepingCapacity: true)
        let w = widthPx, h = heightPx, count = w * h
        guard w >= 3, h >= 3 else { return }
        // Barrier: the edges, dilated by a (2r+1)² square when asked (closes gaps of up to 2r px).
        for k in 0..<count { mask[k] = edges[k] != 0 ? 1 : 0 }
        if dilationRadius > 0 { morphology(erode: false, radius: dilationRadius) }
        for k in 0..<count { labels[k] = mask[k] != 0 ? 2 : 0 }
        floodBackgroundFromBorder()
        for k in 0..<count { mask[k] = labels[k] == 1 ? 0 : 1 }
        labelMask(minimumSidePx: minimumSidePx, openingRadius: openingRadius)
    }

    /// Labels 1 every pixel of `labels` still 0 that a 4-connected path of such pixels joins to the frame's border
    /// (the background), a row run at a time (`fillRun`, `spread`): the same pixels as a pixel-by-pixel flood.
    private func floodBackgroundFromBorder() {
        let w = widthPx, h = heightPx
        var runCount = 0
        for x in 0..<w {
            if labels[x] == 0 { fillRun(x, row: 0, label: 1, runCount: &runCount) }
            if labels[(h - 1) * w + x] == 0 { fillRun(x, row: h - 1, label: 1, runCount: &runCount) }
        }
        for y in 0..<h {
            if labels[y * w] == 0 { fillRun(0, row: y, label: 1, runCount: &runCount) }
            if labels[y * w + w - 1] == 0 { fillRun(w - 1, row: y, label: 1, runCount: &runCount) }
        }
        _ = spread(label: 1, diagonal: false, runCount: runCount)
    }

    /// Gives `label` to the run of 0s in row `y` through column `x` (which is 0) and appends the run to `runs`.
    @inline(__always) private func fillRun(_ x: Int, row y: Int, label: Int32, runCount: inout Int) {
        let row = y * widthPx
        var first = x, last = x
        while first > 0 && labels[row + first - 1] == 0 { first -= 1 }
        while last < widthPx - 1 && labels[row + last + 1] == 0 { last += 1 }
        for k in (row + first)...(row + last) { labels[k] = label }
        runs[2 * runCount] = Int32(row + first)
        runs[2 * runCount + 1] = Int32(row + last)
        runCount += 1
    }

    /// Gives `label` to every pixel still 0 that pixels still 0 join to the runs `runs[0..<runCount]` (4-connected,
    /// or 8-connected with `diagonal`), a run at a time: each run is filled when found, then the rows above and below
    /// it are searched along it (one column further each way with `diagonal`). Every pixel is filled once, so
    /// `runs` ends holding each filled run once; returns their count.
    private func spread(label: Int32, diagonal: Bool, runCount: Int) -> Int {
        let w = widthPx, h = heightPx
        var head = 0, tail = runCount
        @inline(__always) func fillRunsTouching(_ x0: Int, _ x1: Int, row y: Int) {
            let row = y * w
            var x = x0
            while x <= x1 {
                if labels[row + x] == 0 {
                    fillRun(x, row: y, label: label, runCount: &tail)
                    x = Int(runs[2 * tail - 1]) - row + 2  // past the run just filled and the pixel after it
                } else {
                    x += 1
                }
            }
        }
        while head < tail {
            let first = Int(runs[2 * head]), last = Int(runs[2 * head + 1])
            head += 1
            let y = first / w
            let x0 = diagonal ? max(0, first - y * w - 1) : first - y * w
            let x1 = diagonal ? min(w - 1, last - y * w + 1) : last - y * w
            if y > 0 { fillRunsTouching(x0, x1, row: y - 1) }
            if y < h - 1 { fillRunsTouching(x0, x1, row: y + 1) }
        }
        return tail
    }

    /// Extracts the 8-connected regions of `foreground` (`widthPx × heightPx` bytes, row-major, non-zero = inside a
    /// print; e.g. a segmenter's cells) whose bounding box is at least `minimumSidePx` on both sides, after opening
    /// it with a (2r+1)² square (`openingRadius` r; 0 = as it is). The frame's outermost ring never belongs to a
    /// region. Same outputs as `extract(edges:…)`; allocates nothing once `regions` and the hulls have grown.
    func extract(foreground: UnsafePointer<UInt8>, minimumSidePx: Int, openingRadius: Int) {
        regions.removeAll(keepingCapacity: true)
        hullPoints.removeAll(keepingCapacity: true)
        let count = widthPx * heightPx
        guard widthPx >= 3, heightPx >= 3 else { return }
        for k in 0..<count { mask[k] = foreground[k] != 0 ? 1 : 0 }
        labelMask(minimumSidePx: minimumSidePx, openingRadius: openingRadius)
    }

    /// Opens `mask` (1 = foreground), labels it and appends each large enough region with its hull.
    private func labelMask(minimumSidePx: Int, openingRadius: Int) {
        let w = widthPx, h = heightPx, count = w * h
        // Open the foreground (erode then dilate, each a separable min/max over a square), then clear the border
        // ring so the labelling below never steps off the frame.
        morphology(erode: true, radius: openingRadius)
        morphology(erode: false, radius: openingRadius)
        for k in 0..<count { labels[k] = mask[k] != 0 ? 0 : 1 }
        for i in 0..<w { labels[i] = 1; labels[(h - 1) * w + i] = 1 }
        for j in 0..<h { labels[j * w] = 1; labels[j * w + w - 1] = 1 }
        // Label what is left, 8-connected, a row run at a time.
        var next: Int32 = 3
        for start in 0..<count where labels[start] == 0 {
            let label = next
            next += 1
            var runCount = 0
            let y = start / w
            fillRun(start - y * w, row: y, label: label, runCount: &runCount)
            runCount = spread(label: label, diagonal: true, runCount: runCount)
            appendRegion(label: label, runCount: runCount, minimumSidePx: minimumSidePx)
        }
    }

    /// Whether pixel `k` (row-major index) belongs to `region`, one of the regions of the last `extract(edges:…)` or
    /// `extract(foreground:…)`.
    func contains(_ region: Region, pixel k: Int) -> Bool { labels[k] == region.label }

    /// Makes one region per label of `labels` (`widthPx × heightPx`, row-major; `0..<labelCount`, negative = none),
    /// whatever its connectivity (e.g. the cells that voted for one print's outline, which a hand may cut in two),
    /// keeping those whose bounding box is at least `minimumSidePx` on both sides (`Region.label` says which label
    /// each is). Allocates nothing once `regions` and the hulls have grown.
    func extract(labels cellLabels: UnsafePointer<Int32>, labelCount: Int, minimumSidePx: Int) {
        regions.removeAll(keepingCapacity: true)
        hullPoints.removeAll(keepingCapacity: true)
        let w = widthPx
        for label in 0..<Int32(labelCount) {
            // The label's row runs in raster order.
            var runCount = 0
            for y in 0..<heightPx {
                for x in 0..<w where cellLabels[y * w + x] == label {
                    let k = Int32(y * w + x)
                    if x > 0 && runCount > 0 && runs[2 * runCount - 1] == k - 1 {
                        runs[2 * runCount - 1] = k
                    } else {
                        runs[2 * runCount] = k
                        runs[2 * runCount + 1] = k
                        runCount += 1
                    }
                }
            }
            appendRegion(label: label, runCount: runCount, minimumSidePx: minimumSidePx)
        }
    }

    /// Appends the region made of the row runs `runs[0..<runCount]` (disjoint), with its row extents' convex hull,
    /// when its bounding box is at least `minimumSidePx` on both sides.
    private func appendRegion(label: Int32, runCount: Int, minimumSidePx: Int) {
        let w = widthPx
        guard runCount > 0 else { return }
        var minX = w, minY = heightPx, maxX = -1, maxY = -1, pixelCount = 0
        for r in 0..<runCount {
            let first = Int(runs[2 * r]), last = Int(runs[2 * r + 1])
            let y = first / w
            minX = min(minX, first - y * w); maxX = max(maxX, last - y * w); minY = min(minY, y); maxY = max(maxY, y)
            pixelCount += last - first + 1
        }
        guard maxX - minX + 1 >= minimumSidePx, maxY - minY + 1 >= minimumSidePx else { return }
        for y in minY...maxY { rowMin[y] = Int32(w); rowMax[y] = -1 }
        for r in 0..<runCount {
            let first = Int(runs[2 * r]), last = Int(runs[2 * r + 1])
            let y = first / w
            rowMin[y] = min(rowMin[y], Int32(first - y * w))
            rowMax[y] = max(rowMax[y], Int32(last - y * w))
        }
        scratch.removeAll(keepingCapacity: true)
        for y in minY...maxY where rowMax[y] >= 0 {
            scratch.append(PixelPoint(Double(rowMin[y]) + 0.5, Double(y) + 0.5))
            if rowMax[y] != rowMin[y] { scratch.append(PixelPoint(Double(rowMax[y]) + 0.5, Double(y) + 0.5)) }
        }
        let hullStart = hullPoints.count
        hull.compute(&scratch, into: &hullPoints)
        regions.append(
            Region(
                label: label, pixelCount: pixelCount, minX: minX, minY: minY, maxX: maxX, maxY: maxY,
                hullStart: hullStart, hullCount: hullPoints.count - hullStart))
    }

    private typealias Bytes = SIMD16<UInt8>

    /// Erodes (min) or dilates (max) `mask` in place with a (2r+1)² square; outside the frame counts as background.
    /// Separable: rows sum each window's 2r + 1 pixels (vectorised), columns keep a sliding count per column.
    private func morphology(erode: Bool, radius r: Int) {
        let w = widthPx, h = heightPx, full = 2 * r + 1
        // Horizontal pass: mask → maskScratch. Where the whole window lies in the row, sixteen pixels at a time sum
        // the window's 2r + 1 shifted rows; near the row's ends, one by one over the part inside the frame.
        let want = erode ? full : 1
        let n = Bytes.scalarCount
        for j in 0..<h {
            let row = mask + j * w, out = maskScratch + j * w
            @inline(__always) func single(_ i: Int) {
                var ones = 0
                for x in max(0, i - r)...min(w - 1, i + r) { ones &+= Int(row[x]) }
                out[i] = ones >= want ? 1 : 0
            }
            var i = 0
            while i < min(r, w) { single(i); i += 1 }
            // ones ≥ want ⇔ bit 7 of ones + 128 − want (ones, want ≤ 2r + 1 < 128): no lane-wise compare. A wider
            // window (r ≥ 64, never used) takes the one-by-one path; its bias is then meaningless and unused.
            let bias = Bytes(repeating: UInt8(truncatingIfNeeded: 128 - want))
            while full < 128 && i + n + r <= w {
                var ones = Bytes(repeating: 0)
                for d in -r...r { ones &+= UnsafeRawPointer(row + i + d).loadUnaligned(as: Bytes.self) }
                let bits = (ones &+ bias) &>> 7
                UnsafeMutableRawPointer(out + i).storeBytes(of: bits, as: Bytes.self)
                i += n
            }
            while i < w { single(i); i += 1 }
        }
        // Vertical pass: maskScratch → mask, all columns at once row by row with per-column counts: in bytes, sixteen
        // columns at a time, and the same bit-7 test, for windows under 128 rows; else in `columnOnes`.
        if full < 128 {
            let ones = columnOnes8
            for i in 0..<w { ones[i] = 0 }
            /// ones[i] ±= row[i] for every column (`subtracting`: −=).
            @inline(__always) func accumulate(_ row: UnsafePointer<UInt8>, subtracting: Bool) {
                var i = 0
                while i + n <= w {
                    let a = UnsafeRawPointer(ones + i).loadUnaligned(as: Bytes.self)
                    let b = UnsafeRawPointer(row + i).loadUnaligned(as: Bytes.self)
                    UnsafeMutableRawPointer(ones + i).storeBytes(of: subtracting ? a &- b : a &+ b, as: Bytes.self)
                    i += n
                }
                while i < w {
                    ones[i] = subtracting ? ones[i] &- row[i] : ones[i] &+ row[i]
                    i += 1
                }
            }
            for y in 0..<min(r, h) { accumulate(maskScratch + y * w, subtracting: false) }
            let bias8 = UInt8(128 - want), bias = Bytes(repeating: bias8)
            for j in 0..<h {
                if j + r < h { accumulate(maskScratch + (j + r) * w, subtracting: false) }
                if j - r - 1 >= 0 { accumulate(maskScratch + (j - r - 1) * w, subtracting: true) }
                let out = mask + j * w
                var i = 0
                while i + n <= w {
                    let a = UnsafeRawPointer(ones + i).loadUnaligned(as: Bytes.self)
                    UnsafeMutableRawPointer(out + i).storeBytes(of: (a &+ bias) &>> 7, as: Bytes.self)
                    i += n
                }
                while i < w {
                    out[i] = (ones[i] &+ bias8) &>> 7
                    i += 1
                }
            }
            return
        }
        for i in 0..<w { columnOnes[i] = 0 }
        for y in 0..<min(r, h) { for i in 0..<w { columnOnes[i] &+= Int32(maskScratch[y * w + i]) } }
        for j in 0..<h {
            if j + r < h { let row = maskScratch + (j + r) * w; for i in 0..<w { columnOnes[i] &+= Int32(row[i]) } }
            if j - r - 1 >= 0 {
                let row = maskScratch + (j - r - 1) * w; for i in 0..<w { columnOnes[i] &-= Int32(row[i]) }
            }
            let out = mask + j * w
            let want32 = Int32(want)
            for i in 0..<w { out[i] = columnOnes[i] >= want32 ? 1 : 0 }
        }
    }
}
