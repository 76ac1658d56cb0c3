/// Completes a white-bordered print's outline when only some of its sides were found at the paper's edge: on a light
/// table the border's outer edge can fade out along one or two sides (lighting gradient, blur), and the refined quad
/// then runs along the picture's edge there and along the paper's edge elsewhere.
///
/// Per side it measures the border inside the side (a bright, even band from the side inwards to a clear edge
/// parallel to it). When at least two sides agree on a border width `w`, each side without an inner border whose
/// outside is a bright, even band of about `w` is moved outwards: to the edge found at `w` (± 40 %) when there is
/// one, else by `w`. Value type; no allocation. Threading: one thread at a time.
struct BorderCompleter {
    /// Weakest edge (levels of luma change across 2 px) that ends a border band.
    var minimumEdgeStrength = 6.0
    private static let samples = 12

    @inline(__always) private static func strength(_ s: PlaneSampler, _ p: PixelPoint, _ n: PixelPoint) -> Double {
        abs(s.lumaAt(p + n) - s.lumaAt(p - n))
    }

    /// Border width inside side `side` of `quad` (clockwise), px, and the band's mean luma; nil when there is none.
    private func innerBorder(_ quad: Quad, side: Int, maximumPx: Double, in s: PlaneSampler) -> (Double, Double)? {
        let a = quad[side], b = quad[side + 1]
        let along = b - a
        let length = (along * along).sum().squareRoot()
        guard length > 8 else { return nil }
        let u = along / length
        let inward = PixelPoint(-u.y, u.x)
        var widths = SIMD16<Double>()  // the first `found` lanes
        var found = 0
        var sum = 0.0, sumSquares = 0.0, n = 0.0
        for k in 0..<BorderCompleter.samples {
            let base = a + along * (0.15 + 0.7 * (Double(k) + 0.5) / Double(BorderCompleter.samples))
            var offset = 2.0
            var hit = -1.0
            var previous = BorderCompleter.strength(s, base + inward * 1.0, inward)
            var current = BorderCompleter.strength(s, base + inward * 2.0, inward)
            while offset < maximumPx {
                let next = BorderCompleter.strength(s, base + inward * (offset + 1), inward)
                if current >= minimumEdgeStrength && current >= previous && current >= next { hit = offset; break }
                previous = current; current = next; offset += 1
            }
            guard hit >= 3 else { continue }
            // The band up to the edge, 1 px clear of both edges.
            var t = 1.5
            while t <= hit - 1.5 {
                let v = s.lumaAt(base + inward * t)
                sum += v; sumSquares += v * v; n += 1
                t += 1
            }
            widths[found] = hit
            found += 1
        }
        guard found >= BorderCompleter.samples * 2 / 3, n > 0 else { return nil }
        let mean = sum / n, std = max(0, sumSquares / n - mean * mean).squareRoot()
        guard PaperBand.isPaper(meanLuma: mean, stdDevLuma: std) else { return nil }
        // Median width of the found lanes; most samples must agree with it.
        withUnsafeMutableBytes(of: &widths) { raw in
            insertionSort(UnsafeMutableBufferPointer(rebasing: raw.bindMemory(to: Double.self)[0..<found]), by: <)
        }
        let median = widths[found / 2]
        var agree = 0
        for k in 0..<found where abs(widths[k] - median) <= max(1.5, 0.2 * median) { agree += 1 }
        guard agree * 3 >= found * 2 else { return nil }
        return (median, mean)
    }

    /// How far to move side `side` outwards for a border of about `width` px with band luma near `bandLuma`; nil
    /// when the outside is not such a band.
    private func outerOffset(_ quad: Quad, side: Int, width: Double, bandLuma: Double, in s: PlaneSampler) -> Double? {
        let a = quad[side], b = quad[side + 1]
        let along = b - a
        let length = (along * along).sum().squareRoot()
        guard length > 8 else { return nil }
        let u = along / length
        let outward = PixelPoint(u.y, -u.x)
        var sum = 0.0, sumSquares = 0.0, n = 0.0
        var offsets = 0.0, found = 0.0
        for k in 0..<BorderCompleter.samples {
            let base = a + along * (0.15 + 0.7 * (Double(k) + 0.5) / Double(BorderCompleter.samples))
            var t = 2.0
            while t <= 0.6 * width {
                let v = s.lumaAt(base + outward * t)
                sum += v; sumSquares += v * v; n += 1
                t += 1
            }
            // The strongest peak within the expected border width.
            var best = 0.0, bestOffset = -1.0
            var o = max(2.0, (0.6 * width).rounded(.down))
            while o <= 1.4 * width + 1 {
                let v = BorderCompleter.strength(s, base + outward * o, outward)
                if v > best { best = v; bestOffset = o }
                o += 1
            }
            if best >= minimumEdgeStrength { offsets += bestOffset; found += 1 }
        }
        guard n > 0 else { return nil }
        let mean = sum / n, std = max(0, sumSquares / n - mean * mean).squareRoot()
        guard PaperBand.isPaper(meanLuma: mean, stdDevLuma: std), abs(mean - bandLuma) <= 25 else { return nil }
        return found >= Double(BorderCompleter.samples) / 2 ? offsets / found : width
    }

    /// The completed quad, or nil when nothing was moved.
    func complete(_ quad: Quad, in s: PlaneSampler) -> Quad? {
        let size = quad.area.squareRoot()
        var widths = SIMD4<Double>()  // 0 = no inner border on that side
        var bordered = 0
        var widthSum = 0.0, lumaSum = 0.0
        for side in 0..<4 {
            guard let (w, l) = innerBorder(quad, side: side, maximumPx: 0.12 * size, in: s) else { continue }
            widths[side] = w
            bordered += 1
            widthSum += w; lumaSum += l
        }
        guard bordered >= 2, bordered < 4 else { return nil }
        let width = widthSum / Double(bordered), luma = lumaSum / Double(bordered)
        // The borders found must agree (one print, one border width).
        for side in 0..<4 where widths[side] > 0 && abs(widths[side] - width) > max(2.0, 0.35 * width) { return nil }
        // Move the unbordered sides out along their normals, then re-intersect the corners.
        var linePoint = quad, lineDirection = quad
        var moved = false
        for side in 0..<4 {
            let a = quad[side]
            var d = quad[side + 1] - a
            d /= (d * d).sum().squareRoot()
            linePoint[side] = a
            lineDirection[side] = d
            if widths[side] == 0, let offset = outerOffset(quad, side: side, width: width, bandLuma: luma, in: s) {
                linePoint[side] = a + PixelPoint(d.y, -d.x) * offset
                moved = true
            }
        }
        guard moved,
            let c0 = EdgeRefiner.intersect(linePoint[3], lineDirection[3], linePoint[0], lineDirection[0]),
            let c1 = EdgeRefiner.intersect(linePoint[0], lineDirection[0], linePoint[1], lineDirection[1]),
            let c2 = EdgeRefiner.intersect(linePoint[1], lineDirection[1], linePoint[2], lineDirection[2]),
            let c3 = EdgeRefiner.intersect(linePoint[2], lineDirection[2], linePoint[3], lineDirection[3])
        else { return nil }
        return Quad(c0, c1, c2, c3)
    }
}
