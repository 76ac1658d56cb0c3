#if canImport(Glibc)
    import Glibc
#endif

/// Refines a coarse quad at full resolution: along each side it samples points, finds the photo's edge along the
/// side's normal (the outermost strong gradient peak, sub-pixel by a parabola), fits a line through them (total least
/// squares with one outlier pass) and intersects adjacent lines for the corners.
///
/// It also scores the quad: the fraction of samples with a clear edge on the fitted line (occlusion or a fake
/// outline scores low). Reuses its scratch storage (no allocation once grown). Threading: one thread at a time.
struct EdgeRefiner {
    struct Result {
        var quad: Quad
        /// Per-side fraction of samples that found an edge on the fitted line, 0...1.
        var sideSupport: (Double, Double, Double, Double)
        /// Bit i: side i kept its line from the input because most of its edge profiles reached outside the frame
        /// (`keepingUnfoundSides` only): the side is out of view, not faded.
        var outOfViewSides = 0
        /// Bit i: side i kept its line from the input (`keepingUnfoundSides` only): out of view, or no clear edge.
        var keptSides = 0
        var meanSupport: Double { (sideSupport.0 + sideSupport.1 + sideSupport.2 + sideSupport.3) / 4 }
        var minSupport: Double { min(min(sideSupport.0, sideSupport.1), min(sideSupport.2, sideSupport.3)) }
        /// Support of side `i` (0...3; side i runs from corner i to corner i+1).
        func support(of side: Int) -> Double {
            switch side & 3 {
            case 0: return sideSupport.0
            case 1: return sideSupport.1
            case 2: return sideSupport.2
            default: return sideSupport.3
            }
        }
    }

    /// Weakest edge that counts, in levels of change across 2 px (luma; chroma weighted by `chromaWeight`).
    var minimumEdgeStrength = 9.0
    var chromaWeight = 2.0
    /// With `keepingUnfoundSides`, a fitted side moves only when this fraction of its samples lies on its line.
    var minimumSupportToMove = 0.35
    /// Samples per side at most (fewer on short sides: one per 4 px, at least 12).
    var maximumSamplesPerSide = 40
    /// How far outside the paper's edge a drop shadow's far side may lie, pixels (0: no shadow test).
    var shadowValleyMaxPx = 10.0
    /// The darkest a shadow beside a print makes the table, as a fraction of the table's luma.
    var shadowMaximumDarkening = 0.5
    /// The fraction of a side's samples that must show a drop shadow before the side moves in to the paper's edge.
    var shadowMinimumFraction = 0.25
    private var points: [PixelPoint] = []
    /// The same samples' edge points with a drop shadow's far side replaced by the paper's edge inside it.
    private var shadowFreePoints: [PixelPoint] = []
    /// Diagnostics of the last failed `refine`: the side that failed (-1 = the corners) and its edge points found.
    private(set) var failedSide = 0, failedSidePoints = 0, failedSideSamples = 0
    /// Edge strength along one sample's normal (fixed capacity: the search window is clamped to fit).
    private var profile: [Double]
    private let profileCapacity = 128
    /// The planes sampled along one normal, 1 px apart (`profileCapacity` + 2 entries): the profile's strengths are
    /// their differences two apart.
    private var lineLuma: [Double], lineCb: [Double], lineCr: [Double]

    init() {
        points.reserveCapacity(128)
        shadowFreePoints.reserveCapacity(128)
        profile = [Double](repeating: 0, count: profileCapacity)
        lineLuma = [Double](repeating: 0, count: profileCapacity + 2)
        lineCb = lineLuma
        lineCr = lineLuma
    }

    /// Whether the edge strength across the direction `n` at `p` — |Δ| over ±1 px of luma and weighted chroma
    /// combined — reaches `threshold` (compared squared; the chroma is sampled only when luma alone falls short).
    @inline(__always) private func hasEdge(
        _ s: PlaneSampler, _ p: PixelPoint, _ n: PixelPoint, atLeast threshold: Double
    ) -> Bool {
        let a = p + n, b = p - n
        let dy = s.lumaAt(a) - s.lumaAt(b)
        let needed = threshold * threshold
        var total = dy * dy
        guard total < needed, s.cb != nil else { return total >= needed }
        let (cba, cra) = s.chromaAt(a), (cbb, crb) = s.chromaAt(b)
        let w2 = chromaWeight * chromaWeight
        total += w2 * ((cba - cbb) * (cba - cbb) + (cra - crb) * (cra - crb))
        return total >= needed
    }

    /// Refines `quad` (clockwise on screen) in `sampler`'s frame.
    /// - Parameters:
    ///   - inwardPx: how far inside each side to search, pixels.
    ///   - outwardPx: how far outside.
    /// - Returns: nil when a side finds too few edge points to fit a line or the lines do not meet sensibly.
    ///   - firstFromInside: pick the innermost clear peak instead of the outermost (used to step outwards from a
    ///     picture's edge to the outer edge of its white border).
    ///   - keepingUnfoundSides: a side without enough edge points, or whose line is supported by fewer than
    ///     `minimumSupportToMove` of its samples, keeps its line from `quad` (moved with the opposite side's shift;
    ///     support 0) instead of failing the whole refinement (tracking: a print's edge fades out for a while; a
    ///     line fitted to texture would wander).
    ///   - nearestPeak: pick the clear peak nearest the given side instead of the outermost (tracking: stay on the
    ///     edge followed so far).
    mutating func refine(
        _ quad: Quad, in sampler: PlaneSampler, inwardPx: Double, outwardPx: Double,
        firstFromInside: Bool = false, keepingUnfoundSides: Bool = false,
        nearestPeak: Bool = false
    ) -> Result? {
        var linePoint = (PixelPoint.zero, PixelPoint.zero, PixelPoint.zero, PixelPoint.zero)
        var lineDir = (PixelPoint.zero, PixelPoint.zero, PixelPoint.zero, PixelPoint.zero)
        var support = (0.0, 0.0, 0.0, 0.0)
        var keptSides = 0  // bit i: side i kept its line from `quad`
        var outOfViewSides = 0
        let maxX = Double(sampler.widthPx) - 1, maxY = Double(sampler.heightPx) - 1  // in-frame sample bounds
        // The shadow test belongs to the outermost-peak search (the full search), not to tracking's nearest peak.
        let testingShadows = !firstFromInside && !nearestPeak && shadowValleyMaxPx > 0
        let hasChroma = sampler.cb != nil
        for side in 0..<4 {
            let a = quad[side], b = quad[side + 1]
            let along = b - a
            let length = (along * along).sum().squareRoot()
            guard length > 4 else { return nil }
            let u = along / length
            // Clockwise on screen: the outward normal is (u.y, -u.x).
            let n = PixelPoint(u.y, -u.x)
            let samples = min(maximumSamplesPerSide, max(12, Int(length / 4)))
            points.removeAll(keepingCapacity: true)
            shadowFreePoints.removeAll(keepingCapacity: true)
            var shadowedSamples = 0
            let steps = min(profileCapacity - 3, Int((inwardPx + outwardPx).rounded(.up)))
            var outOfViewSamples = 0
            for s in 0..<samples {
                let t = 0.08 + 0.84 * (Double(s) + 0.5) / Double(samples)
                let base = a + along * t
                // Tracking: a profile reaching outside the frame measures nothing there (the sampler repeats the
                // border), so a print partly out of view keeps its out-of-view side from the track, not from the
                // picture's texture near the frame's edge.
                if keepingUnfoundSides {
                    let inner = base - n * (inwardPx + 2), outer = base + n * (outwardPx + 2)
                    if min(inner.x, outer.x) < 1 || min(inner.y, outer.y) < 1
                        || max(inner.x, outer.x) > maxX || max(inner.y, outer.y) > maxY
                    {
                        outOfViewSamples += 1
                        continue
                    }
                }
                // Profile from inside to outside at offsets -inwardPx - 1 … -inwardPx + steps + 1: the strength at
                // offset o is the change from o - 1 to o + 1, so the planes are sampled once per offset, from
                // -inwardPx - 2 to -inwardPx + steps + 2 (each sample serves two strengths).
                for j in 0...(steps + 4) {
                    let q = base + n * (-inwardPx - 2 + Double(j))
                    lineLuma[j] = sampler.lumaAt(q)
                    if hasChroma { (lineCb[j], lineCr[j]) = sampler.chromaAt(q) }
                }
                var maxValue = 0.0
                let w2 = chromaWeight * chromaWeight
                for k in 0...(steps + 2) {
                    let dy = lineLuma[k + 2] - lineLuma[k]
                    var total = dy * dy
                    if hasChroma {
                        let dcb = lineCb[k + 2] - lineCb[k], dcr = lineCr[k + 2] - lineCr[k]
                        total += w2 * (dcb * dcb + dcr * dcr)
                    }
                    let v = total.squareRoot()
                    profile[k] = v
                    if k >= 1 && k <= steps + 1 { maxValue = max(maxValue, v) }
                }
                guard maxValue >= minimumEdgeStrength else { continue }
                // Keep the outermost peak at least half the strongest (or, stepping outwards, the first clear one).
                var chosen = -1.0e9, chosenK = -1
                for k in 1...(steps + 1) {
                    let previous = profile[k - 1], current = profile[k], next = profile[k + 1]
                    let clear =
                        firstFromInside || nearestPeak
                        ? current >= max(minimumEdgeStrength, 0.3 * maxValue)
                        : current >= 0.5 * maxValue
                    guard clear && current >= previous && current >= next else { continue }
                    let candidate = peakOffsetPx(k, inwardPx: inwardPx)
                    if nearestPeak && chosen > -1.0e8 && abs(chosen) <= abs(candidate) { continue }
                    chosen = candidate; chosenK = k
                    if firstFromInside { break }
                }
                guard chosen > -1.0e8 else { continue }
                points.append(base + n * chosen)
                guard testingShadows else { continue }
                var inner = chosen
                if let edge = shadowedEdge(
                    outside: chosenK, inwardPx: inwardPx, base: base, normal: n,
                    maxValue: maxValue, in: sampler)
                {
                    inner = edge
                    shadowedSamples += 1
                }
                shadowFreePoints.append(base + n * inner)
            }
            // A drop shadow along the side: when a good part of its samples show one, the line through the
            // paper's edge inside the shadow replaces the outermost peaks' line if more samples agree with it (a
            // shadow whose far side parts from the paper's edge along the side leaves the outermost peaks on no one
            // line), or as many and most samples show the shadow (its far side runs parallel to the edge). A few
            // samples with that profile are picture content or texture, and decide nothing.
            let enough = points.count >= max(4, samples / 4)
            var line = enough ? EdgeRefiner.supportedLine(points) : nil
            if enough, Double(shadowedSamples) >= shadowMinimumFraction * Double(samples),
                let outermost = line, let shadowFree = EdgeRefiner.supportedLine(shadowFreePoints),
                shadowFree.inliers > outermost.inliers
                    || (shadowFree.inliers == outermost.inliers && 2 * shadowedSamples > samples)
            {
                line = shadowFree
            }
            // Tracking: a line on texture, too few samples agree with it.
            if keepingUnfoundSides, let fit = line, Double(fit.inliers) < minimumSupportToMove * Double(samples) {
                line = nil
            }
            guard let fit = line else {
                failedSide = side; failedSidePoints = points.count; failedSideSamples = samples
                guard keepingUnfoundSides else { return nil }
                switch side {
                case 0: linePoint.0 = a; lineDir.0 = u; support.0 = 0
                case 1: linePoint.1 = a; lineDir.1 = u; support.1 = 0
                case 2: linePoint.2 = a; lineDir.2 = u; support.2 = 0
                default: linePoint.3 = a; lineDir.3 = u; support.3 = 0
                }
                keptSides |= 1 << side
                if 2 * outOfViewSamples > samples { outOfViewSides |= 1 << side }
                continue
            }
            // Support: inliers within 1.5 px of the final line over all samples.
            let fraction = Double(fit.inliers) / Double(samples)
            switch side {
            case 0: linePoint.0 = fit.point; lineDir.0 = fit.direction; support.0 = fraction
            case 1: linePoint.1 = fit.point; lineDir.1 = fit.direction; support.1 = fraction
            case 2: linePoint.2 = fit.point; lineDir.2 = fit.direction; support.2 = fraction
            default: linePoint.3 = fit.point; lineDir.3 = fit.direction; support.3 = fraction
            }
        }
        // A kept side moves with the opposite side's measured shift (the prediction's error is mostly a
        // translation): otherwise it would follow the prediction alone and drift.
        for keptSide in 0..<4 where keptSides & (1 << keptSide) != 0 {
            let opposite = keptSide + 2
            guard keptSides & (1 << (opposite & 3)) == 0 else { continue }
            var points = Quad(linePoint.0, linePoint.1, linePoint.2, linePoint.3)
            let oa = quad[opposite], ob = quad[opposite + 1]
            var ou = ob - oa
            ou /= max(1e-9, (ou * ou).sum().squareRoot())
            let outwardOpposite = PixelPoint(ou.y, -ou.x)
            // A translation t moves both parallel sides by t; along the opposite side's normal that is `shift`.
            let shift = ((points[opposite] - oa) * outwardOpposite).sum()
            points[keptSide] = points[keptSide] + outwardOpposite * shift
            linePoint = (points[0], points[1], points[2], points[3])
        }
        // Corner i is where side i-1 meets side i.
        guard let c0 = EdgeRefiner.intersect(linePoint.3, lineDir.3, linePoint.0, lineDir.0),
            let c1 = EdgeRefiner.intersect(linePoint.0, lineDir.0, linePoint.1, lineDir.1),
            let c2 = EdgeRefiner.intersect(linePoint.1, lineDir.1, linePoint.2, lineDir.2),
            let c3 = EdgeRefiner.intersect(linePoint.2, lineDir.2, linePoint.3, lineDir.3)
        else { failedSide = -1; return nil }
        return Result(
            quad: Quad(c0, c1, c2, c3), sideSupport: support, outOfViewSides: outOfViewSides,
            keptSides: keptSides)
    }

    /// The paper's edge inside a drop shadow's far edge: when the outermost clear peak `outside` (profile index) is
    /// a rise outwards (dark to light) and a clear peak at most `shadowValleyMaxPx` inside it falls outwards (light to
    /// dark), the band between them is a dark valley beside the print. If that band is no darker than half the table
    /// beyond it (a print lying flat casts a faint shadow; a dark stripe in the picture can be black), the outer peak is
    /// the shadow's soft far side and the inner one the paper's edge. Returns the inner peak's offset along the
    /// normal, pixels (sub-pixel), or nil.
    private func shadowedEdge(
        outside: Int, inwardPx: Double, base: PixelPoint, normal n: PixelPoint,
        maxValue: Double, in s: PlaneSampler
    ) -> Double? {
        @inline(__always) func at(_ k: Int) -> PixelPoint { base + n * (-inwardPx - 1 + Double(k)) }
        @inline(__always) func rise(_ k: Int) -> Double { s.lumaAt(at(k) + n) - s.lumaAt(at(k) - n) }
        guard rise(outside) > 0 else { return nil }
        let lowest = max(1, outside - Int(shadowValleyMaxPx))
        var best = -1
        var k = outside - 1
        while k >= lowest {
            let current = profile[k]
            if current >= 0.5 * maxValue && current >= profile[k - 1] && current >= profile[k + 1]
                && rise(k) < 0 && (best < 0 || current > profile[best])
            {
                best = k
            }
            k -= 1
        }
        guard best >= 1 else { return nil }
        var valley = Double.infinity
        for j in best...outside { valley = min(valley, s.lumaAt(at(j))) }
        let table = s.lumaAt(at(outside) + n * 2)
        guard valley >= shadowMaximumDarkening * table else { return nil }
        return peakOffsetPx(best, inwardPx: inwardPx)
    }

    /// Where the profile's peak at index `k` lies along the normal, pixels from the side (outwards positive): the
    /// sample's offset refined by a parabola through its neighbours (at most half a pixel).
    @inline(__always) private func peakOffsetPx(_ k: Int, inwardPx: Double) -> Double {
        let previous = profile[k - 1], current = profile[k], next = profile[k + 1]
        let denom = previous - 2 * current + next
        let offset = denom < 0 ? max(-0.5, min(0.5, 0.5 * (previous - next) / denom)) : 0
        return -inwardPx + Double(k - 1) + offset
    }

    /// Total-least-squares line through `points`; with `excludingBeyond` = (point, direction, distance), only points
    /// within `distance` of that line take part. Nil when fewer than 3 points take part.
    static func fitLine(
        _ points: [PixelPoint],
        excludingBeyond: (PixelPoint, PixelPoint, Double)?
    ) -> (point: PixelPoint, direction: PixelPoint)? {
        var count = 0.0
        var mean = PixelPoint.zero
        func keep(_ p: PixelPoint) -> Bool {
            guard let (c, d, limit) = excludingBeyond else { return true }
            let normal = PixelPoint(-d.y, d.x)
            return abs(((p - c) * normal).sum()) <= limit
        }
        for p in points where keep(p) { mean += p; count += 1 }
        guard count >= 3 else { return nil }
        mean /= count
        var sxx = 0.0, sxy = 0.0, syy = 0.0
        for p in points where keep(p) {
            let d = p - mean
            sxx += d.x * d.x; sxy += d.x * d.y; syy += d.y * d.y
        }
        // Principal axis of the 2×2 covariance.
        let angle = 0.5 * atan2(2 * sxy, sxx - syy)
        return (mean, PixelPoint(cos(angle), sin(angle)))
    }

    /// The line through `points` as `refine` fits a side (total least squares, then once more without the points
    /// over 1.5 px off it) and how many points lie within 1.5 px of it. Nil when fewer than 3 points.
    static func supportedLine(_ points: [PixelPoint]) -> (point: PixelPoint, direction: PixelPoint, inliers: Int)? {
        guard var fit = fitLine(points, excludingBeyond: nil) else { return nil }
        if let refit = fitLine(points, excludingBeyond: (fit.point, fit.direction, 1.5)) { fit = refit }
        let normal = PixelPoint(-fit.direction.y, fit.direction.x)
        var inliers = 0
        for p in points where abs(((p - fit.point) * normal).sum()) <= 1.5 { inliers += 1 }
        return (fit.point, fit.direction, inliers)
    }

    static func intersect(_ p1: PixelPoint, _ d1: PixelPoint, _ p2: PixelPoint, _ d2: PixelPoint) -> PixelPoint? {
        let denom = d1.x * d2.y - d1.y * d2.x
        guard abs(denom) > 1e-6 else { return nil }
        let diff = p2 - p1
        let t = (diff.x * d2.y - diff.y * d2.x) / denom
        return p1 + d1 * t
    }

    /// Repairs a side that cut across the photo (the coarse region lost a corner) or lies on the table beside it (the
    /// region took in a shadow or a strip of textured table): slides a line parallel to the opposite side from
    /// `inwardPx` inside the weak side to `maximumOffsetPx` outside it, scoring each position by the fraction of 16
    /// points between the two neighbouring sides' lines that sit on a clear edge, and moves the side to the best
    /// position (the innermost of equals) when it scores at least 0.6 and clearly beats the current one.
    /// - Returns: the repaired quad, or nil when no better position was found.
    func repairSide(
        _ quad: Quad, side: Int, currentSupport: Double, in sampler: PlaneSampler,
        maximumOffsetPx: Double, inwardPx: Double = 2
    ) -> Quad? {
        let oppositeStart = quad[side + 2], oppositeEnd = quad[side + 3]
        var d = oppositeStart - oppositeEnd  // runs the same way as the weak side
        let length = (d * d).sum().squareRoot()
        guard length > 4 else { return nil }
        d /= length
        let n = PixelPoint(d.y, -d.x)  // outward for a clockwise quad
        let previousPoint = quad[side - 1], previousDirection = quad[side] - quad[side - 1]
        let nextPoint = quad[side + 1], nextDirection = quad[side + 2] - quad[side + 1]
        let weakMid = (quad[side] + quad[side + 1]) / 2
        let startOffset = ((weakMid - oppositeStart) * n).sum()
        var bestHits = 0, bestOffset = startOffset
        var offset = startOffset - inwardPx
        while offset <= startOffset + maximumOffsetPx {
            let anchor = oppositeStart + n * offset
            guard let a = EdgeRefiner.intersect(anchor, d, previousPoint, previousDirection),
                let b = EdgeRefiner.intersect(anchor, d, nextPoint, nextDirection)
            else { offset += 1; continue }
            // Counted until this offset can no longer beat the best (the result is the same as counting all 16).
            var hits = 0
            for k in 0..<16 {
                if hits + (16 - k) <= bestHits { break }
                let t = 0.1 + 0.8 * (Double(k) + 0.5) / 16
                if hasEdge(sampler, a + (b - a) * t, n, atLeast: 1.5 * minimumEdgeStrength) { hits += 1 }
            }
            if hits > bestHits { bestHits = hits; bestOffset = offset }
            offset += 1
        }
        let bestScore = Double(bestHits) / 16
        guard bestScore >= 0.6, bestScore >= currentSupport + 0.15 else { return nil }
        let anchor = oppositeStart + n * bestOffset
        guard let a = EdgeRefiner.intersect(anchor, d, previousPoint, previousDirection),
            let b = EdgeRefiner.intersect(anchor, d, nextPoint, nextDirection)
        else { return nil }
        var repaired = quad
        repaired[side] = a
        repaired[side + 1] = b
        return repaired
    }
}
