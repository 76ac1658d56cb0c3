extension Quad {
    /// Completes an outline of a photo partly out of view from the last outline in which it was wholly seen.
    ///
    /// The corners whose two sides are both in view are measured; they fix a similarity transform (a translation
    /// when only one is) from `reference`'s same corners. Each out-of-view side is `reference`'s side moved by that
    /// transform; each side in view keeps its measured line (through this quad's corners); the corners are where
    /// adjacent lines meet. So an out-of-view side moves rigidly with the visible part, instead of wherever the
    /// last frames' corner motion would carry it (which, with nothing to measure it, sustains itself).
    ///
    /// - Parameters:
    ///   - outOfViewSides: bit i = side i (corner i to corner i+1) is out of view.
    ///   - reference: the same photo's outline when last wholly in view, same corner numbering.
    /// - Returns: the completed outline, or nil when no corner is measured or two adjacent lines are parallel.
    func completingOutOfViewSides(_ outOfViewSides: Int, from reference: Quad) -> Quad? {
        // Least-squares similarity z ↦ a·z + b over the measured corners (complex arithmetic on (x, y)).
        var count = 0.0
        var referenceMean = PixelPoint.zero, measuredMean = PixelPoint.zero
        for i in 0..<4 where outOfViewSides & (1 << i) == 0 && outOfViewSides & (1 << ((i + 3) & 3)) == 0 {
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
            for i in 0..<4 where outOfViewSides & (1 << i) == 0 && outOfViewSides & (1 << ((i + 3) & 3)) == 0 {
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
            let (p, q) = outOfViewSides & (1 << side) != 0
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
