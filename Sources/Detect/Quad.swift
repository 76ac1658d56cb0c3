#if canImport(Glibc)
    import Glibc
#endif

/// A point in frame pixel coordinates: the frame spans `[0, widthPx] × [0, heightPx]`, pixel `(i, j)` covers
/// `[i, i+1] × [j, j+1]` and its centre is `(i + 0.5, j + 0.5)`.
public typealias PixelPoint = SIMD2<Double>

/// Four corners of a photo in frame pixels, clockwise on screen (y down) starting from the corner nearest the
/// frame's top-left `(0, 0)`.
public struct Quad: Sendable, Hashable {
    public var corners: (PixelPoint, PixelPoint, PixelPoint, PixelPoint)

    public init(_ a: PixelPoint, _ b: PixelPoint, _ c: PixelPoint, _ d: PixelPoint) { corners = (a, b, c, d) }

    public static func == (l: Quad, r: Quad) -> Bool {
        l.corners.0 == r.corners.0 && l.corners.1 == r.corners.1 && l.corners.2 == r.corners.2
            && l.corners.3 == r.corners.3
    }

    public func hash(into hasher: inout Hasher) {
        for i in 0..<4 { hasher.combine(self[i].x); hasher.combine(self[i].y) }
    }

    /// Corner `i` (0...3).
    public subscript(i: Int) -> PixelPoint {
        get {
            switch i & 3 {
            case 0: return corners.0
            case 1: return corners.1
            case 2: return corners.2
            default: return corners.3
            }
        }
        set {
            switch i & 3 {
            case 0: corners.0 = newValue
            case 1: corners.1 = newValue
            case 2: corners.2 = newValue
            default: corners.3 = newValue
            }
        }
    }

    /// Shoelace signed area: positive when clockwise on screen (y down).
    public var signedArea: Double {
        var sum = 0.0
        for i in 0..<4 {
            let p = self[i], q = self[i + 1]
            sum += p.x * q.y - q.x * p.y
        }
        return sum / 2
    }

    public var area: Double { abs(signedArea) }

    public var centroid: PixelPoint { (corners.0 + corners.1 + corners.2 + corners.3) / 4 }

    /// The same corners in colorcam's canonical order: clockwise on screen, first the one nearest `(0, 0)`.
    public func canonicallyOrdered() -> Quad {
        var q = self
        if q.signedArea < 0 { q = Quad(q[3], q[2], q[1], q[0]) }
        var start = 0
        var best = Double.infinity
        for i in 0..<4 {
            let d = q[i].x * q[i].x + q[i].y * q[i].y
            if d < best { best = d; start = i }
        }
        return Quad(q[start], q[start + 1], q[start + 2], q[start + 3])
    }

    /// Mean length of sides 0–1 and 2–3 (width) and of sides 1–2 and 3–0 (height), pixels.
    public var meanSideLengthsPx: (width: Double, height: Double) {
        func len(_ a: PixelPoint, _ b: PixelPoint) -> Double { ((a - b) * (a - b)).sum().squareRoot() }
        return (
            (len(self[0], self[1]) + len(self[2], self[3])) / 2, (len(self[1], self[2]) + len(self[3], self[0])) / 2
        )
    }

    /// Interior angle at corner `i`, degrees (0 when a side there has no length).
    func interiorAngleDegrees(at i: Int) -> Double {
        let a = self[i + 3] - self[i], b = self[i + 1] - self[i]
        let na = (a * a).sum().squareRoot(), nb = (b * b).sum().squareRoot()
        guard na > 0, nb > 0 else { return 0 }
        return acosDegrees(max(-1, min(1, (a * b).sum() / (na * nb))))
    }

    /// Interior angles at corners 0…3, degrees.
    var interiorAnglesDegrees: SIMD4<Double> {
        SIMD4(
            interiorAngleDegrees(at: 0), interiorAngleDegrees(at: 1), interiorAngleDegrees(at: 2),
            interiorAngleDegrees(at: 3))
    }

    /// Largest deviation of an interior angle from 90°, degrees (90 when a side has no length).
    public var maxRightAngleDeviationDegrees: Double {
        var worst = 0.0
        for i in 0..<4 { worst = max(worst, abs(interiorAngleDegrees(at: i) - 90)) }
        return worst
    }

    /// `sides` (bit i = side i, corner i to corner i+1) renumbered for the same quad with its corners cyclically
    /// shifted so that new corner k is old corner k + `shift`.
    static func sideMask(_ sides: Int, shiftedBy shift: Int) -> Int {
        var shifted = 0
        for k in 0..<4 where sides & (1 << ((k + shift) & 3)) != 0 { shifted |= 1 << k }
        return shifted
    }

    /// True when the quad is convex and not self-intersecting.
    public var isConvex: Bool {
        var sign = 0.0
        for i in 0..<4 {
            let a = self[i + 1] - self[i], b = self[i + 2] - self[i + 1]
            let cross = a.x * b.y - a.y * b.x
            if cross == 0 { return false }
            if sign == 0 { sign = cross } else if (sign > 0) != (cross > 0) { return false }
        }
        return true
    }

    /// Mean distance between corresponding corners, `other`'s numbering cyclically shifted by `shift`, px.
    @inline(__always) public func meanCornerDistance(to other: Quad, shift: Int = 0) -> Double {
        var sum = 0.0
        for i in 0..<4 {
            let d = self[i] - other[i + shift]
            sum += (d * d).sum().squareRoot()
        }
        return sum / 4
    }

    /// Whether every corner of `inner` lies inside this quad or within `tolerancePx` outside one of its sides (an
    /// outline sharing a side counts as inside). This quad must be convex.
    func encloses(_ inner: Quad, tolerancePx: Double) -> Bool {
        let orientation: Double = signedArea >= 0 ? 1 : -1
        for i in 0..<4 {
            let side = self[i + 1] - self[i]
            let length = (side * side).sum().squareRoot()
            guard length > 0 else { return false }
            for k in 0..<4 {
                let d = inner[k] - self[i]
                if orientation * (side.x * d.y - side.y * d.x) / length < -tolerancePx { return false }
            }
        }
        return true
    }

    /// The quad with each side moved outwards along its normal by `distancePx` (inwards when negative), corners at
    /// the moved lines' intersections; nil when adjacent sides are nearly parallel. The quad must be convex.
    func offsettingSides(byPx distancePx: Double) -> Quad? {
        offsettingSides(byPx: SIMD4(repeating: distancePx))
    }

    /// The same with side k (corner k to k + 1) moved by `distancesPx[k]`.
    func offsettingSides(byPx distancesPx: SIMD4<Double>) -> Quad? {
        let orientation: Double = signedArea >= 0 ? 1 : -1
        // Side k's moved line: a point on it and its unit direction (nil for a zero-length side).
        func line(_ k: Int) -> (point: PixelPoint, direction: PixelPoint)? {
            let side = self[k + 1] - self[k]
            let length = (side * side).sum().squareRoot()
            guard length > 0 else { return nil }
            let u = side / length
            return (self[k] + PixelPoint(u.y, -u.x) * (orientation * distancesPx[k & 3]), u)
        }
        var result = self
        for i in 0..<4 {
            guard let before = line(i + 3), let after = line(i),
                let corner = EdgeRefiner.intersect(before.point, before.direction, after.point, after.direction)
            else { return nil }
            result[i] = corner
        }
        return result
    }

    /// True when `p` lies inside (the quad must be convex).
    public func contains(_ p: PixelPoint) -> Bool {
        var sign = 0.0
        for i in 0..<4 {
            let a = self[i + 1] - self[i], b = p - self[i]
            let cross = a.x * b.y - a.y * b.x
            if sign == 0 { sign = cross } else if (sign > 0) != (cross > 0) && cross != 0 { return false }
        }
        return true
    }
}

@inline(__always) func acosDegrees(_ x: Double) -> Double { acos(x) * 180 / Double.pi }
