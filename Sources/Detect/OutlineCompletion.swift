extension Quad {
    /// Completes an outline with unmeasured sides (out of view, or without a clear edge) from the last outline in
    /// which the photo was wholly measured.
    ///
    /// The corners whose two sides are both in view are measured; they fix a similarity transform (a translation
    /// when only one is) from `reference`'s same corners. Each unmeasured side is `reference`'s side moved by that
    /// transform; each measured side keeps its line (through this quad's corners); the corners are where
    /// adjacent lines meet. So an unmeasured side moves rigidly with the measured part, instead of wherever the
    /// last frames' corner motion would carry it (which, with nothing to measure it, sustains itself).
    ///
    /// - Parameters:
    ///   - unmeasuredSides: bit i = side i (corner i to corner i+1) was not measured.
    ///   - reference: the same photo's outline when last wholly in view, same corner numbering.
    /// - Returns: the completed outline, or nil when no corner is measured or two adjacent lines are parallel.
    func completingUnmeasuredSides(_ unmeasuredSides: Int, from reference: Quad) -> Quad? {
        // Least-squares similarity z ↦ a·z + b over the measured corners (complex arithmetic on (x, y)).
        // Corner i is measured when sides i - 1 and i both are.
        let unmeasuredCorners = unmeasuredSides | ((unmeasuredSides << 1) | (unmeasuredSides >> 3)) & 0b1111
        var count = 0.0
        var referenceMean = PixelPoint.zero, measuredMean = PixelPoint.zero
        for i in 0..<4 where unmeasuredCorners & (1 << i) == 0 {
            referenceMean += reference[i]
            measuredMean += self[i]
            count += 1
        }
        guard count > 0 else { return nil }
        referenceMean /= count
        measuredMean /= count
        var a = PixelPoint(1, 0)  // (real, imaginary)
        if count >= 2 {
            var numerator = PixelPoint.zero, denominator = 0.0
            for i in 0..<4 where unmeasuredCorners & (1 << i) == 0 {
                let z = reference[i] - referenceMean, w = self[i] - measuredMean
                // w · conj(z)
                numerator += PixelPoint(w.x * z.x + w.y * z.y, w.y * z.x - w.x * z.y)
                denominator += z.x * z.x + z.y * z.y
            }
            guard denominator > 0 else { return nil }
            a = numerator / denominator
        }
        func moved(_ p: PixelPoint) -> PixelPoint {
            let z = p - referenceMean
            return measuredMean + PixelPoint(a.x * z.x - a.y * z.y, a.x * z.y + a.y * z.x)
        }
        var start = self, direction = self  // per side (no allocation)
        for side in 0..<4 {
            let (p, q) =
                unmeasuredSides & (1 << side) != 0
                ? (moved(reference[side]), moved(reference[side + 1])) : (self[side], self[side + 1])
            start[side] = p
            direction[side] = q - p
        }
        var completed = self
        for i in 0..<4 {
            let previous = (i + 3) & 3
            guard let corner = EdgeRefiner.intersect(start[previous], direction[previous], start[i], direction[i])
            else { return nil }
            completed[i] = corner
        }
        return completed
    }
}

extension Quad {
    /// Sides (bit i = side i) both of whose corners' interior angles (`angles`) differ from `reference` by more
    /// than `toleranceDegrees`: a side turned against the rest of the outline. A photo is rigid and the camera's
    /// view of it changes slowly (well under 0.1° per frame), so such a side lies on something else (texture, a
    /// neighbour's edge).
    static func bentSides(_ angles: SIMD4<Double>, from reference: SIMD4<Double>, toleranceDegrees: Double) -> Int {
        var bentCorners = 0
        for i in 0..<4 where abs(angles[i] - reference[i]) > toleranceDegrees { bentCorners |= 1 << i }
        var sides = 0
        for side in 0..<4 where bentCorners & (1 << side) != 0 && bentCorners & (1 << ((side + 1) & 3)) != 0 {
            sides |= 1 << side
        }
        return sides
    }
}
