import Foundation

/// Fits the smallest-area quadrilateral that encloses a convex polygon (a region's hull) with its sides on the
/// polygon's sides: the outline of a print part of which is hidden.
///
/// `QuadFitter`'s largest inscribed quad needs all four corners on the hull. A print whose corner lies under another
/// print (or off the segmenter's map) has a hull with a cut where that corner should be, and the inscribed quad drops
/// one of the cut's ends: its sides then run across the print. Extending the sides next to the cut until they meet
/// puts the hidden corner back, and among all quads whose sides lie on the hull's sides that one is the smallest.
///
/// The hull's sides are first merged into straight stretches (consecutive sides turning less than
/// `mergeToleranceDegrees` from the stretch's first), each a line through the stretch's outermost vertex along its
/// chord, so the lines enclose the hull; of the longest `maxStretches` stretches every four in order whose lines
/// meet ahead (each turn between 0° and 180°, exclusive of `minimumTurnDegrees` at either end) form a quad, and the
/// smallest is kept. At most C(12, 4) = 495 candidates.
///
/// Units: the hull's (grid units in, grid units out). Reuses its scratch storage (no allocation once grown).
/// Threading: one thread at a time per instance.
struct EnclosingQuadFitter {
    var mergeToleranceDegrees = 15.0
    var maxStretches = 12
    var minimumTurnDegrees = 20.0

    private struct Stretch {
        var point: PixelPoint  // on the line (the stretch's outermost vertex)
        var direction: PixelPoint  // unit, along the hull's order
        var length: Double
        var angle: Double  // of `direction`, radians
    }

    private var stretches: [Stretch] = []
    private var kept: [Stretch] = []

    init() {
        stretches.reserveCapacity(64)
        kept.reserveCapacity(64)
    }

    /// The smallest enclosing quad on `hull`'s sides (a convex polygon, clockwise on screen, at least 4 vertices),
    /// clockwise, or nil when no four stretches form one.
    mutating func fit(_ hull: ArraySlice<PixelPoint>) -> Quad? {
        let n = hull.count
        guard n >= 4 else { return nil }
        @inline(__always) func v(_ i: Int) -> PixelPoint { hull[hull.startIndex + (i % n)] }
        // Start the walk at the vertex after the sharpest turn, so no stretch wraps around the start.
        var start = 0, sharpest = -1.0
        for i in 0..<n {
            let a = v(i + n - 1), b = v(i), c = v(i + 1)
            let d1 = b - a, d2 = c - b
            let l1 = (d1 * d1).sum().squareRoot(), l2 = (d2 * d2).sum().squareRoot()
            guard l1 > 0, l2 > 0 else { continue }
            let turn = 1 - (d1 * d2).sum() / (l1 * l2)
            if turn > sharpest { sharpest = turn; start = i }
        }
        let tolerance = cos(mergeToleranceDegrees * Double.pi / 180)
        stretches.removeAll(keepingCapacity: true)
        var first = start
        while first < start + n {
            // Extend the stretch while each side keeps within the tolerance of its first side's direction.
            var d0 = v(first + 1) - v(first)
            var l0 = (d0 * d0).sum().squareRoot()
            if l0 == 0 { first += 1; continue }
            d0 /= l0
            var last = first + 1
            while last < start + n {
                let d = v(last + 1) - v(last)
                let l = (d * d).sum().squareRoot()
                if l > 0 && (d * d0).sum() / l < tolerance { break }
                last += 1
            }
            let chord = v(last) - v(first)
            l0 = (chord * chord).sum().squareRoot()
            let direction = l0 > 0 ? chord / l0 : d0
            // The outermost vertex of the stretch: the largest distance to the right of the chord (clockwise on
            // screen, y down: outwards is the left-hand normal in screen terms, (d.y, -d.x)).
            let normal = PixelPoint(direction.y, -direction.x)
            var point = v(first), far = 0.0
            for k in first...last {
                let distance = ((v(k) - v(first)) * normal).sum()
                if distance > far { far = distance; point = v(k) }
            }
            d0 = direction
            stretches.append(Stretch(point: point, direction: d0, length: l0, angle: atan2(d0.y, d0.x)))
            first = last
        }
        guard stretches.count >= 4 else { return nil }
        // The longest, in hull order.
        kept.removeAll(keepingCapacity: true)
        if stretches.count <= maxStretches {
            kept.append(contentsOf: stretches)
        } else {
            // The `maxStretches`-th longest length (sorted in the scratch list), then those at least as long in order.
            kept.append(contentsOf: stretches)
            kept.withUnsafeMutableBufferPointer { insertionSort($0) { $0.length > $1.length } }
            let threshold = kept[maxStretches - 1].length
            kept.removeAll(keepingCapacity: true)
            for s in stretches where s.length >= threshold && kept.count < maxStretches { kept.append(s) }
        }
        let m = kept.count
        let minimumTurn = minimumTurnDegrees * Double.pi / 180
        @inline(__always) func turn(_ a: Int, _ b: Int) -> Double {
            var t = kept[b].angle - kept[a].angle
            while t < 0 { t += 2 * Double.pi }
            while t >= 2 * Double.pi { t -= 2 * Double.pi }
            return t
        }
        @inline(__always) func meets(_ a: Int, _ b: Int) -> Bool {
            let t = turn(a, b)
            return t > minimumTurn && t < Double.pi - minimumTurn
        }
        var best: Quad?
        var bestArea = Double.infinity
        for a in 0..<m {
            for b in (a + 1)..<m where meets(a, b) {
                for c in (b + 1)..<m where meets(b, c) {
                    for d in (c + 1)..<m where meets(c, d) && meets(d, a) {
                        guard let p0 = corner(kept[d], kept[a]), let p1 = corner(kept[a], kept[b]),
                            let p2 = corner(kept[b], kept[c]), let p3 = corner(kept[c], kept[d])
                        else { continue }
                        let quad = Quad(p0, p1, p2, p3)
                        let area = quad.area
                        if area < bestArea && quad.isConvex { bestArea = area; best = quad }
                    }
                }
            }
        }
        return best
    }

    /// Where `s`'s line meets `t`'s.
    private func corner(_ s: Stretch, _ t: Stretch) -> PixelPoint? {
        EdgeRefiner.intersect(s.point, s.direction, t.point, t.direction)
    }
}
