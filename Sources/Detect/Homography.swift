/// A plane-to-plane projective map, `p' ~ H · (x, y, 1)`, row-major 3×3 with `h[8]` normalised to 1.
/// A value type; allocation-free.
public struct Homography: Sendable, Hashable {
    public var h: (Double, Double, Double, Double, Double, Double, Double, Double, Double)

    public static func == (l: Homography, r: Homography) -> Bool {
        l.h.0 == r.h.0 && l.h.1 == r.h.1 && l.h.2 == r.h.2 && l.h.3 == r.h.3 && l.h.4 == r.h.4 && l.h.5 == r.h.5
            && l.h.6 == r.h.6 && l.h.7 == r.h.7 && l.h.8 == r.h.8
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(h.0); hasher.combine(h.1); hasher.combine(h.2); hasher.combine(h.3); hasher.combine(h.4)
        hasher.combine(h.5); hasher.combine(h.6); hasher.combine(h.7); hasher.combine(h.8)
    }

    public init(_ h: (Double, Double, Double, Double, Double, Double, Double, Double, Double)) { self.h = h }

    /// The map taking `from[i]` to `to[i]` for the four corners; nil when three points are collinear.
    /// Solves the 8×8 DLT system (h8 = 1) with partial pivoting in stack scratch (`LinearSystem`): no heap allocation.
    public init?(from: Quad, to: Quad) {
        let solution = withUnsafeTemporaryAllocation(of: Double.self, capacity: 72) {
            a -> (Double, Double, Double, Double, Double, Double, Double, Double)? in
            a.initialize(repeating: 0)
            for i in 0..<4 {
                let (x, y, u, v) = (from[i].x, from[i].y, to[i].x, to[i].y)
                let r0 = 2 * i * 9, r1 = (2 * i + 1) * 9
                a[r0 + 0] = x; a[r0 + 1] = y; a[r0 + 2] = 1; a[r0 + 6] = -u * x; a[r0 + 7] = -u * y; a[r0 + 8] = u
                a[r1 + 3] = x; a[r1 + 4] = y; a[r1 + 5] = 1; a[r1 + 6] = -v * x; a[r1 + 7] = -v * y; a[r1 + 8] = v
            }
            guard LinearSystem.solve(a.baseAddress!, unknowns: 8) else { return nil }
            return (a[8], a[17], a[26], a[35], a[44], a[53], a[62], a[71])
        }
        guard let s = solution else { return nil }
        h = (s.0, s.1, s.2, s.3, s.4, s.5, s.6, s.7, 1)
    }

    /// Maps `p`; returns nil at or behind the horizon (w ≤ 0).
    @inline(__always) public func apply(_ p: PixelPoint) -> PixelPoint? {
        let w = h.6 * p.x + h.7 * p.y + h.8
        guard w > 1e-12 else { return nil }
        return PixelPoint((h.0 * p.x + h.1 * p.y + h.2) / w, (h.3 * p.x + h.4 * p.y + h.5) / w)
    }

    /// The inverse map; nil when singular.
    public var inverse: Homography? {
        let (a, b, c, d, e, f, g, i, j) = h
        let c00 = e * j - f * i, c01 = -(d * j - f * g), c02 = d * i - e * g
        let det = a * c00 + b * c01 + c * c02
        guard abs(det) > 1e-15 else { return nil }
        let m = (
            c00, -(b * j - c * i), b * f - c * e,
            c01, a * j - c * g, -(a * f - c * d),
            c02, -(a * i - b * g), a * e - b * d
        )
        let inv = (m.0 / det, m.1 / det, m.2 / det, m.3 / det, m.4 / det, m.5 / det, m.6 / det, m.7 / det, m.8 / det)
        guard abs(inv.8) > 1e-15 else { return Homography(inv) }
        return Homography(
            (
                inv.0 / inv.8, inv.1 / inv.8, inv.2 / inv.8, inv.3 / inv.8, inv.4 / inv.8, inv.5 / inv.8,
                inv.6 / inv.8, inv.7 / inv.8, 1
            ))
    }
}

extension Homography {
    /// The identity map.
    public static let identity = Homography((1, 0, 0, 0, 1, 0, 0, 0, 1))

    /// `l · r`: the map applying `r` first, then `l`; normalised so that `h[8]` is 1 (unless it is 0).
    public static func * (l: Homography, r: Homography) -> Homography {
        let a = l.h, b = r.h
        let m = (
            a.0 * b.0 + a.1 * b.3 + a.2 * b.6, a.0 * b.1 + a.1 * b.4 + a.2 * b.7, a.0 * b.2 + a.1 * b.5 + a.2 * b.8,
            a.3 * b.0 + a.4 * b.3 + a.5 * b.6, a.3 * b.1 + a.4 * b.4 + a.5 * b.7, a.3 * b.2 + a.4 * b.5 + a.5 * b.8,
            a.6 * b.0 + a.7 * b.3 + a.8 * b.6, a.6 * b.1 + a.7 * b.4 + a.8 * b.7, a.6 * b.2 + a.7 * b.5 + a.8 * b.8
        )
        guard abs(m.8) > 1e-15 else { return Homography(m) }
        return Homography((m.0 / m.8, m.1 / m.8, m.2 / m.8, m.3 / m.8, m.4 / m.8, m.5 / m.8, m.6 / m.8, m.7 / m.8, 1))
    }
}

extension Quad {
    /// The quad with every corner mapped by `h`; nil when a corner falls at or behind the horizon.
    public func mapped(by h: Homography) -> Quad? {
        guard let a = h.apply(self[0]), let b = h.apply(self[1]), let c = h.apply(self[2]), let d = h.apply(self[3])
        else { return nil }
        return Quad(a, b, c, d)
    }
}
