import Detect

/// What lies over a black-and-white print — a hand, a pen, a coloured object —, told by the print's one tone. A
/// monochrome print has one tone (neutral, sepia or cool, shifted alike by the light): its chroma in proportion to
/// its luma (`toneOf`), the same in its shadows and highlights. The median over the print is that tone; a hand or
/// any coloured object differs from it, in a dim scene as in a bright one. A colour print has no one tone: when more
/// than `colourPrintFraction` of it is off its median, nothing can be told — the measure says 0 and the mask is
/// clear, and the print is painted and judged as if nothing covered it.
///
/// The print is read on a `side × side` grid of cell centres in its rectified frame, inset by one cell from its edge
/// so a slightly loose outline does not count the table. Two results: the covered fraction of the cells (what a
/// keepsake view is judged by), and a mask of covered cells (bit `v · side + u`) for the compositor, which leaves
/// those cells' live colour alone: a cell is kept only with at least two covered neighbours (a hand is a blob, a
/// lone cell is noise), and the edge ring takes its inner neighbour's bit.
///
/// A namespace of functions over caller-owned scratch; no allocation.
enum CoverMask {
    static let side = 24
    /// Words of a mask.
    static let words = (side * side + 63) / 64
    /// Distance from the print's tone (|ΔCb| + |ΔCr| of `toneOf`, levels) beyond which a cell is covered.
    static let toneDistance: Int32 = 12
    /// Above this fraction off the median tone the print is taken for a colour print (hands over a print cover less).
    static let colourPrintFraction = 0.35
    /// Scratch `measure` needs: 512 histogram counts, two tone levels and a flag per cell.
    static let scratchCount = 512 + 3 * side * side

    /// Measures what covers the print at `quad` in the sampler's frame.
    /// - Parameters:
    ///   - scratch: `scratchCount` values, overwritten.
    ///   - mask: `words` words, overwritten (all clear when nothing can be told).
    /// - Returns: the covered fraction of the inner cells, 0…1; 0 for a frame without chroma or a degenerate quad.
    static func measure(
        _ sampler: FrameSampler, quad: Quad, scratch: UnsafeMutablePointer<Int32>, mask: UnsafeMutablePointer<UInt64>
    ) -> Double {
        mask.initialize(repeating: 0, count: words)
        guard sampler.cb != nil, let map = Rectifier.homography(for: quad, widthPx: side, heightPx: side)
        else { return 0 }
        let histograms = scratch, tones = scratch + 512
        histograms.initialize(repeating: 0, count: 512)
        var count: Int32 = 0
        for v in 1..<(side - 1) {
            for u in 1..<(side - 1) {
                let p = map.apply(PixelPoint(Double(u) + 0.5, Double(v) + 0.5)) ?? PixelPoint(-1, -1)
                let (cb, cr) = sampler.chromaAt(p)!
                let (b, r) = toneOf(luma: sampler.lumaAt(p), cb: cb, cr: cr)
                tones[2 * (v * side + u)] = b
                tones[2 * (v * side + u) + 1] = r
                histograms[Int(b)] += 1
                histograms[256 + Int(r)] += 1
                count += 1
            }
        }
        @inline(__always) func median(_ base: Int) -> Int32 {
            var seen: Int32 = 0
            for level in 0..<256 {
                seen += histograms[base + level]
                if 2 * seen >= count { return Int32(level) }
            }
            return 128
        }
        let toneCb = median(0), toneCr = median(256)
        let flags = tones + 2 * side * side
        var covered: Int32 = 0
        for v in 0..<side {
            for u in 0..<side {
                let inner = u > 0 && v > 0 && u < side - 1 && v < side - 1
                let i = v * side + u
                let far = inner && abs(tones[2 * i] - toneCb) + abs(tones[2 * i + 1] - toneCr) > toneDistance
                flags[i] = far ? 1 : 0
                covered += far ? 1 : 0
            }
        }
        let fraction = Double(covered) / Double(count)
        guard fraction <= colourPrintFraction else { return 0 }
        @inline(__always) func flag(_ u: Int, _ v: Int) -> Bool {
            u > 0 && v > 0 && u < side - 1 && v < side - 1 && flags[v * side + u] != 0
        }
        for v in 0..<side {
            for u in 0..<side {
                // The ring takes its inner neighbour's place.
                let iu = min(max(u, 1), side - 2), iv = min(max(v, 1), side - 2)
                guard flag(iu, iv) else { continue }
                let neighbours =
                    (flag(iu - 1, iv) ? 1 : 0) + (flag(iu + 1, iv) ? 1 : 0) + (flag(iu, iv - 1) ? 1 : 0)
                    + (flag(iu, iv + 1) ? 1 : 0)
                if neighbours >= 2 { mask[(v * side + u) >> 6] |= 1 << UInt64((v * side + u) & 63) }
            }
        }
        return fraction
    }

    /// Whether the mask covers the rectified point (`u`, `v` in 0…1 across the print).
    @inline(__always) static func isCovered(_ mask: UnsafePointer<UInt64>, u: Double, v: Double) -> Bool {
        let cu = min(side - 1, max(0, Int(u * Double(side)))), cv = min(side - 1, max(0, Int(v * Double(side))))
        let i = cv * side + cu
        return mask[i >> 6] & (1 << UInt64(i & 63)) != 0
    }

    /// A sample's tone: its chroma scaled to mid-grey luma (Cb, Cr offsets × 128 / Y, luma at least 24 so that
    /// sensor noise in the blacks does not count), as 0…255 levels around 128.
    @inline(__always) static func toneOf(luma: Float, cb: Float, cr: Float) -> (Int32, Int32) {
        let gain = 128 / max(luma, 24)
        @inline(__always) func level(_ c: Float) -> Int32 {
            Int32(min(255, max(0, 128 + (c - 128) * gain)).rounded())
        }
        return (level(cb), level(cr))
    }
}
