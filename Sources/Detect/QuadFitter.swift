/// Fits the largest-area quadrilateral whose corners are vertices of a convex polygon (the region's hull).
///
/// For a print the hull is nearly its quad with rounded-off corners, so the largest inscribed quad lands on the
/// print's corners. O(n²) with two monotone pointers (the hull is first thinned to at most `maxVertices`).
/// Reuses its scratch storage (no allocation once grown). Threading: one thread at a time per instance.
struct QuadFitter {
    var maxVertices = 64
    private var vertices: [PixelPoint] = []

    init() { vertices.reserveCapacity(128) }

    @inline(__always) private static func triangleArea(_ a: PixelPoint, _ b: PixelPoint, _ c: PixelPoint) -> Double {
        abs((b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)) / 2
    }

    /// The largest quad on `hull` (a convex polygon, clockwise on screen), or nil with fewer than 4 vertices.
    mutating func fit(_ hull: ArraySlice<PixelPoint>) -> Quad? {
        guard hull.count >= 4 else { return nil }
        vertices.removeAll(keepingCapacity: true)
        if hull.count <= maxVertices {
            vertices.append(contentsOf: hull)
        } else {
            let step = Double(hull.count) / Double(maxVertices)
            for k in 0..<maxVertices { vertices.append(hull[hull.startIndex + Int(Double(k) * step)]) }
        }
        let n = vertices.count
        var best = -1.0
        var corners = (0, 1, 2, 3)
        @inline(__always) func v(_ i: Int) -> PixelPoint { vertices[i % n] }
        for i in 0..<n {
            var k = i + 1
            var l = i + 3
            for j in (i + 2)..<(i + n - 1) {
                // k in (i, j): the farthest vertex from the diagonal i–j on one side.
                if k <= i { k = i + 1 }
                while k + 1 < j
                    && QuadFitter.triangleArea(v(i), v(k + 1), v(j)) >= QuadFitter.triangleArea(v(i), v(k), v(j))
                {
                    k += 1
                }
                // l in (j, i + n): the farthest on the other side.
                if l <= j { l = j + 1 }
                while l + 1 < i + n
                    && QuadFitter.triangleArea(v(j), v(l + 1), v(i)) >= QuadFitter.triangleArea(v(j), v(l), v(i))
                {
                    l += 1
                }
                let area = QuadFitter.triangleArea(v(i), v(k), v(j)) + QuadFitter.triangleArea(v(j), v(l), v(i))
                if area > best { best = area; corners = (i, k, j, l) }
            }
        }
        return Quad(v(corners.0), v(corners.1), v(corners.2), v(corners.3))
    }
}
