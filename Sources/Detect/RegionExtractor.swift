/// Finds closed regions in an edge map: everything the table's background cannot reach from the frame border
/// without crossing an edge. Each such region is a candidate photo; its outline is the outermost edge around it,
/// which for a print with a white border is the print's outer edge, not the picture's.
///
/// Steps: dilate edges 3×3 (closes 1–2 px gaps) → flood the background from the border (4-connected) → open the
/// rest with a 5×5 square (removes thin structures: a finger's outline, a hand's edge reaching into a print, edge
/// bands left between prints) → label it (8-connected) → per region its pixel count, bounding box and the convex
/// hull of its row extents.
///
/// Ownership: buffers are allocated once in `init` for one coarse size; `regions` and the hull storage are reused
/// (capacity kept) between calls. Threading: one thread at a time.
final class RegionExtractor {
    struct Region {
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
    private let queue: UnsafeMutablePointer<Int32>
    /// Foreground masks for the opening (1 = not background).
    private let mask: UnsafeMutablePointer<UInt8>
    private let maskScratch: UnsafeMutablePointer<UInt8>
    /// Half-width of the opening's square structuring element, coarse px (2 → 5×5).
    var openingRadius = 2
    private let rowMin: UnsafeMutablePointer<Int32>
    private let rowMax: UnsafeMutablePointer<Int32>
    private(set) var regions: [Region] = []
    private(set) var hullPoints: [PixelPoint] = []
    private var scratch: [PixelPoint] = []
    private var hull = ConvexHull()
    private let neighbourOffsets: [Int]

    init(widthPx: Int, heightPx: Int) {
        self.widthPx = widthPx
        self.heightPx = heightPx
        let count = widthPx * heightPx
        labels = .allocate(capacity: count)
        queue = .allocate(capacity: count)
        mask = .allocate(capacity: count)
        maskScratch = .allocate(capacity: count)
        mask.initialize(repeating: 0, count: count)
        maskScratch.initialize(repeating: 0, count: count)
        rowMin = .allocate(capacity: heightPx)
        rowMax = .allocate(capacity: heightPx)
        labels.initialize(repeating: 0, count: count)
        queue.initialize(repeating: 0, count: count)
        rowMin.initialize(repeating: 0, count: heightPx)
        rowMax.initialize(repeating: 0, count: heightPx)
        regions.reserveCapacity(512)
        hullPoints.reserveCapacity(8192)
        scratch.reserveCapacity(2 * heightPx + 8)
        neighbourOffsets = [-widthPx - 1, -widthPx, -widthPx + 1, -1, 1, widthPx - 1, widthPx, widthPx + 1]
    }

    deinit {
        labels.deallocate()
        queue.deallocate()
        mask.deallocate()
        maskScratch.deallocate()
        rowMin.deallocate()
        rowMax.deallocate()
    }

    /// Extracts the regions enclosed by `edges` whose bounding box is at least `minimumSidePx` on both sides.
    /// With `dilate` false the edges are used as they are (a 4-connected flood cannot cross an 8-connected edge).
    func extract(edges: UnsafePointer<UInt8>, minimumSidePx: Int, dilate: Bool) {
        regions.removeAll(keepingCapacity: true)
        hullPoints.removeAll(keepingCapacity: true)
        let w = widthPx, h = heightPx, count = w * h
        guard w >= 3, h >= 3 else { return }
        // Dilated barrier.
        for k in 0..<count { labels[k] = 0 }
        for j in 0..<h {
            for i in 0..<w where edges[j * w + i] != 0 {
                if !dilate { labels[j * w + i] = 2; continue }
                for dj in -1...1 {
                    let y = j + dj
                    if y < 0 || y >= h { continue }
                    for di in -1...1 {
                        let x = i + di
                        if x >= 0 && x < w { labels[y * w + x] = 2 }
                    }
                }
            }
        }
        // Background flood from every border pixel, 4-connected.
        var head = 0, tail = 0
        func seed(_ k: Int) {
            if labels[k] == 0 { labels[k] = 1; queue[tail] = Int32(k); tail += 1 }
        }
        for i in 0..<w { seed(i); seed((h - 1) * w + i) }
        for j in 0..<h { seed(j * w); seed(j * w + w - 1) }
        while head < tail {
            let k = Int(queue[head]); head += 1
            let x = k % w
            if x > 0 { seed(k - 1) }
            if x < w - 1 { seed(k + 1) }
            if k >= w { seed(k - w) }
            if k < count - w { seed(k + w) }
        }
        // Open the foreground (erode then dilate, each a separable min/max over a square).
        for k in 0..<count { mask[k] = labels[k] == 1 ? 0 : 1 }
        morphology(erode: true)
        morphology(erode: false)
        for k in 0..<count { labels[k] = mask[k] != 0 ? 0 : 1 }
        // Label what is left, 8-connected.
        var next: Int32 = 3
        for start in 0..<count where labels[start] == 0 {
            let label = next
            next += 1
            head = 0; tail = 0
            labels[start] = label
            queue[tail] = Int32(start); tail += 1
            var minX = w, minY = h, maxX = -1, maxY = -1
            while head < tail {
                let k = Int(queue[head]); head += 1
                let x = k % w, y = k / w
                minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
                if x == 0 || y == 0 || x == w - 1 || y == h - 1 { continue }
                for offset in neighbourOffsets {
                    let n = k + offset
                    let l = labels[n]
                    if l == 0 { labels[n] = label; queue[tail] = Int32(n); tail += 1 }
                }
            }
            if maxX - minX + 1 < minimumSidePx || maxY - minY + 1 < minimumSidePx { continue }
            // Row extents → convex hull.
            for y in minY...maxY { rowMin[y] = Int32(w); rowMax[y] = -1 }
            for q in 0..<tail {
                let k = Int(queue[q])
                let x = Int32(k % w), y = k / w
                if x < rowMin[y] { rowMin[y] = x }
                if x > rowMax[y] { rowMax[y] = x }
            }
            scratch.removeAll(keepingCapacity: true)
            for y in minY...maxY where rowMax[y] >= 0 {
                scratch.append(PixelPoint(Double(rowMin[y]) + 0.5, Double(y) + 0.5))
                if rowMax[y] != rowMin[y] { scratch.append(PixelPoint(Double(rowMax[y]) + 0.5, Double(y) + 0.5)) }
            }
            let hullStart = hullPoints.count
            hull.compute(&scratch, into: &hullPoints)
            regions.append(Region(pixelCount: tail, minX: minX, minY: minY, maxX: maxX, maxY: maxY,
                                  hullStart: hullStart, hullCount: hullPoints.count - hullStart))
        }
    }

    /// Erodes (min) or dilates (max) `mask` in place with a (2r+1)² square; outside the frame counts as background.
    private func morphology(erode: Bool) {
        let w = widthPx, h = heightPx, r = openingRadius
        // Horizontal pass: mask → maskScratch.
        for j in 0..<h {
            let row = mask + j * w, out = maskScratch + j * w
            for i in 0..<w {
                var value: UInt8 = erode ? 1 : 0
                for d in -r...r {
                    let x = i + d
                    let v: UInt8 = (x < 0 || x >= w) ? 0 : row[x]
                    if erode { if v == 0 { value = 0; break } } else if v != 0 { value = 1; break }
                }
                out[i] = value
            }
        }
        // Vertical pass: maskScratch → mask.
        for j in 0..<h {
            for i in 0..<w {
                var value: UInt8 = erode ? 1 : 0
                for d in -r...r {
                    let y = j + d
                    let v: UInt8 = (y < 0 || y >= h) ? 0 : maskScratch[y * w + i]
                    if erode { if v == 0 { value = 0; break } } else if v != 0 { value = 1; break }
                }
                mask[j * w + i] = value
            }
        }
    }
}
