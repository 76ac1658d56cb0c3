/// Finds closed regions in an edge map: everything the table's background cannot reach from the frame border
/// without crossing an edge. Each such region is a candidate photo; its outline is the outermost edge around it,
/// which for a print with a white border is the print's outer edge, not the picture's.
///
/// Steps: dilate edges 3×3 (closes 1–2 px gaps) → flood the background from the border (4-connected) → label the
/// rest (8-connected) → per region its pixel count, bounding box and convex hull of its row extents.
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
        // Label what is left (barrier and enclosed pixels), 8-connected.
        var next: Int32 = 3
        for start in 0..<count where labels[start] == 0 || labels[start] == 2 {
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
                    if l == 0 || l == 2 { labels[n] = label; queue[tail] = Int32(n); tail += 1 }
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
}
