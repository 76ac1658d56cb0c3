/// Andrew's monotone-chain convex hull.
///
/// Reuses its scratch storage between calls (no allocation once capacities have grown). Threading: one thread at a
/// time per instance.
struct ConvexHull {
    private var lower: [PixelPoint] = []
    private var upper: [PixelPoint] = []

    init() {
        lower.reserveCapacity(1024)
        upper.reserveCapacity(1024)
    }

    @inline(__always) private static func cross(_ o: PixelPoint, _ a: PixelPoint, _ b: PixelPoint) -> Double {
        (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
    }

    /// Appends the hull of `points` to `output`, clockwise on screen (y down), without repeating the first point.
    /// `points` must be sorted by y, then x (row extents come that way; no sort here, so nothing is allocated).
    /// Collinear points are dropped.
    mutating func compute(_ points: inout [PixelPoint], into output: inout [PixelPoint]) {
        if points.count < 3 {
            output.append(contentsOf: points)
            return
        }
        lower.removeAll(keepingCapacity: true)
        upper.removeAll(keepingCapacity: true)
        for p in points {
            while lower.count >= 2 && ConvexHull.cross(lower[lower.count - 2], lower[lower.count - 1], p) <= 0 {
                lower.removeLast()
            }
            lower.append(p)
        }
        for p in points.reversed() {
            while upper.count >= 2 && ConvexHull.cross(upper[upper.count - 2], upper[upper.count - 1], p) <= 0 {
                upper.removeLast()
            }
            upper.append(p)
        }
        let start = output.count
        output.append(contentsOf: lower.dropLast())
        output.append(contentsOf: upper.dropLast())
        var area = 0.0
        let n = output.count - start
        for k in 0..<n {
            let p = output[start + k], q = output[start + (k + 1) % n]
            area += p.x * q.y - q.x * p.y
        }
        if area < 0 { output[start...].reverse() }
    }
}
