/// Finds the paper's edge around a picture whose outline was placed on the picture's edge instead: a print's border
/// (white, cream, or grey under dim light) shows as an even band of about the same width outside every side, ending
/// in an edge parallel to that side. `BorderCompleter` needs some sides already on the paper's edge, and
/// `PhotoDetector.whiteBorderOutline` a bright band whose outer edge is the first clear peak on every side; on a
/// light or textured table, or under dim light, neither holds and the picture was taken for the print.
///
/// Per side it samples the planes along the outward normal at whole-pixel offsets and takes the edge strength at
/// each (`EdgeRefiner.edgeStrength`'s measure: luma and weighted chroma across 2 px), and counts, per offset, the
/// samples with an edge peak there (±1 px). The border width is the offset where the four sides together count
/// most, each side free within ±25 % of it (the camera's perspective widens one side's band against another's).
/// Accepted when at least three sides have an edge on half their samples, the four average at least
/// `minimumMeanSupport`, and the band between is even (its luma's standard deviation at most
/// `PaperBand.maximumStdDevLuma`: paper, not table texture). It does not know whether the band is paper or table
/// beside a borderless print: the caller asks the segmenter (`PhotoDetector.wideningCandidatesToTheirBorders`).
/// Value type; no allocation (stack scratch). Threading: one thread at a time.
struct UniformBorderFinder {
    /// Samples per side.
    static let samples = 16
    /// The widest border searched, as a fraction of the picture's size (square root of its area).
    var maximumWidthFraction = 0.15
    /// Weakest edge that counts (as `EdgeRefiner.minimumEdgeStrength`).
    var minimumEdgeStrength = 9.0
    var chromaWeight = 2.0
    var minimumSideSupport = 0.5
    var minimumMeanSupport = 0.6
    /// Offsets searched at most (whole pixels from 2 px).
    static let maximumOffsets = 48

    /// The outline around `inner` (clockwise) moved out to the border's outer edge, with its mean support, or nil
    /// when no border was found.
    /// `trace` (diagnostics, `COLORCAM_DETECT_TRACE`) hears why a border was refused.
    func outerOutline(
        around inner: Quad, in s: PlaneSampler, trace: ((String) -> Void)? = nil
    ) -> (quad: Quad, support: Double)? {
        guard inner.isConvex else { return nil }
        let size = inner.area.squareRoot()
        let offsets = min(UniformBorderFinder.maximumOffsets, Int(maximumWidthFraction * size) - 1)
        guard offsets >= 4 else { return nil }
        return withUnsafeTemporaryAllocation(of: SIMD64<Double>.self, capacity: 4) { hits in
            withUnsafeTemporaryAllocation(of: PixelPoint.self, capacity: 4) { normals in
                for side in 0..<4 {
                    guard let n = countPeaks(inner, side: side, offsets: offsets, into: &hits[side], in: s) else {
                        return nil
                    }
                    normals[side] = n
                }
                return outline(inner, hits: hits, normals: normals, offsets: offsets, in: s, trace: trace)
            }
        }
    }

    /// Side `side`'s outward normal; `hits[j]` counts its samples with an edge peak within 1 px of offset j + 2.
    /// Nil for a side too short to sample.
    private func countPeaks(
        _ inner: Quad, side: Int, offsets: Int, into hits: inout SIMD64<Double>, in s: PlaneSampler
    ) -> PixelPoint? {
        let a = inner[side], along = inner[side + 1] - a
        let length = (along * along).sum().squareRoot()
        guard length > 8 else { return nil }
        let u = along / length
        let n = PixelPoint(u.y, -u.x)
        hits = SIMD64()
        let w2 = chromaWeight * chromaWeight
        for k in 0..<UniformBorderFinder.samples {
            let base = a + along * (0.15 + 0.7 * (Double(k) + 0.5) / Double(UniformBorderFinder.samples))
            // The planes at offsets 0 … offsets + 3; the strength at offset o is the change from o - 1 to o + 1.
            var luma = SIMD64<Double>(), cb = SIMD64<Double>(), cr = SIMD64<Double>()
            for j in 0...(offsets + 3) {
                let p = base + n * Double(j)
                luma[j] = s.lumaAt(p)
                if s.cb != nil { (cb[j], cr[j]) = s.chromaAt(p) }
            }
            var strength = SIMD64<Double>()  // offsets 1 … offsets + 2
            for o in 1...(offsets + 2) {
                let dy = luma[o + 1] - luma[o - 1], dcb = cb[o + 1] - cb[o - 1], dcr = cr[o + 1] - cr[o - 1]
                strength[o] = (dy * dy + w2 * (dcb * dcb + dcr * dcr)).squareRoot()
            }
            // Peaks at offsets 2 … offsets + 1, each counted at its own offset and the two beside it (once).
            var near = SIMD64<Double>()
            for o in 2...(offsets + 1)
            where strength[o] >= minimumEdgeStrength && strength[o] >= strength[o - 1]
                && strength[o] >= strength[o + 1]
            {
                for q in max(2, o - 1)...min(offsets + 1, o + 1) { near[q - 2] = 1 }
            }
            hits += near
        }
        return n
    }

    /// The best common width from the sides' peak counts, checked and turned into the outer outline.
    private func outline(
        _ inner: Quad, hits: UnsafeMutableBufferPointer<SIMD64<Double>>,
        normals: UnsafeMutableBufferPointer<PixelPoint>,
        offsets: Int, in s: PlaneSampler, trace: ((String) -> Void)?
    ) -> (quad: Quad, support: Double)? {
        var bestTotal = 0.0, bestOffsets = SIMD4<Double>(), bestSupports = SIMD4<Double>()
        for j in 0..<offsets {
            let window = max(1, Int(0.25 * Double(j + 2)))
            var total = 0.0, sideOffsets = SIMD4<Double>(), supports = SIMD4<Double>()
            for side in 0..<4 {
                var best = 0.0, bestJ = j
                for jj in max(0, j - window)...min(offsets - 1, j + window) where hits[side][jj] > best {
                    best = hits[side][jj]; bestJ = jj
                }
                supports[side] = best / Double(UniformBorderFinder.samples)
                sideOffsets[side] = Double(bestJ + 2)
                total += supports[side]
            }
            if total > bestTotal { bestTotal = total; bestOffsets = sideOffsets; bestSupports = supports }
        }
        var strongSides = 0
        for side in 0..<4 where bestSupports[side] >= minimumSideSupport { strongSides += 1 }
        guard strongSides >= 3, bestTotal / 4 >= minimumMeanSupport else {
            trace?("no border: edge support per side \(bestSupports) at widths \(bestOffsets) px")
            return nil
        }
        // A weak side takes the width the sides agree on.
        let agreed = bestOffsets.sum() / 4
        for side in 0..<4 where bestSupports[side] < minimumSideSupport { bestOffsets[side] = agreed }
        guard isEvenBand(inner, normals: normals, offsets: bestOffsets, in: s, trace: trace) else { return nil }
        guard let outer = inner.offsettingSides(byPx: bestOffsets), outer.isConvex, outer.area > inner.area else {
            return nil
        }
        return (outer, bestTotal / 4)
    }

    /// Whether the band between `inner` and its sides moved out by `offsets` is even: luma sampled at the band's
    /// middle along every side varies no more than paper does (`PaperBand.maximumStdDevLuma`).
    private func isEvenBand(
        _ inner: Quad, normals: UnsafeMutableBufferPointer<PixelPoint>, offsets: SIMD4<Double>, in s: PlaneSampler,
        trace: ((String) -> Void)?
    ) -> Bool {
        var sum = 0.0, sumSquares = 0.0, n = 0.0
        for side in 0..<4 {
            let a = inner[side], along = inner[side + 1] - inner[side]
            for k in 0..<UniformBorderFinder.samples {
                let base = a + along * (0.15 + 0.7 * (Double(k) + 0.5) / Double(UniformBorderFinder.samples))
                let v = s.lumaAt(base + normals[side] * (offsets[side] / 2))
                sum += v; sumSquares += v * v; n += 1
            }
        }
        let mean = sum / n, stdDev = max(0, sumSquares / n - mean * mean).squareRoot()
        guard stdDev <= PaperBand.maximumStdDevLuma else {
            trace?("no border: the band at widths \(offsets) px is uneven (luma mean \(mean), std. dev. \(stdDev))")
            return false
        }
        return true
    }
}
