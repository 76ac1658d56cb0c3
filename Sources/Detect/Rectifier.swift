import ColorcamCore

/// Cuts a photo out of a frame into an upright image: the homography from an output rectangle to the photo's
/// corners, and bilinear resampling of luma and chroma into a caller-provided `FrameBuffer` of any size (e.g. the
/// colorizer's input).
///
/// Output pixel `(u, v)` (centre at +0.5) maps so that the output's corners land on the quad's corners in order:
/// output top-left → `quad[0]`, top-right → `quad[1]`, bottom-right → `quad[2]`, bottom-left → `quad[3]`.
///
/// Ownership and threading: a stateless namespace; `rectify` reads `frame`, writes only `output` (the caller's), and
/// allocates nothing. Safe to call from any thread as long as nobody writes either buffer meanwhile.
public enum Rectifier {
    /// The output→frame homography for `quad` and an output of `widthPx × heightPx`; nil for a degenerate quad.
    public static func homography(for quad: Quad, widthPx: Int, heightPx: Int) -> Homography? {
        let w = Double(widthPx), h = Double(heightPx)
        return Homography(from: Quad(PixelPoint(0, 0), PixelPoint(w, 0), PixelPoint(w, h), PixelPoint(0, h)), to: quad)
    }

    /// An upright size at the photo's estimated true aspect ratio with `longSidePx` on the long side.
    ///
    /// The aspect is the ratio of the mean lengths of opposite sides (exact for a fronto-parallel photo, and within
    /// a few percent at the camera tilts of a handheld webcam over a table).
    public static func uprightSize(for quad: Quad, longSidePx: Int) -> (widthPx: Int, heightPx: Int) {
        let sides = quad.meanSideLengthsPx
        guard sides.width > 0, sides.height > 0 else { return (longSidePx, longSidePx) }
        if sides.width >= sides.height {
            return (longSidePx, max(1, Int((Double(longSidePx) * sides.height / sides.width).rounded())))
        }
        return (max(1, Int((Double(longSidePx) * sides.width / sides.height).rounded())), longSidePx)
    }

    /// Resamples the photo at `quad` in `frame` into `output` (bilinear, every plane; chroma sampled from the
    /// frame's chroma planes, so any subsampling works on either side; a mono output gets luma only).
    /// - Returns: the output→frame homography used, or nil (output untouched) for a degenerate quad.
    @discardableResult
    public static func rectify(_ frame: FrameBuffer, quad: Quad, into output: FrameBuffer) -> Homography? {
        let g = output.geometry
        guard let map = homography(for: quad, widthPx: g.widthPx, heightPx: g.heightPx) else { return nil }
        let sampler = PlaneSampler(frame)
        let luma = output.luma.baseAddress!.assumingMemoryBound(to: UInt8.self)
        for v in 0..<g.heightPx {
            for u in 0..<g.widthPx {
                let p = map.apply(PixelPoint(Double(u) + 0.5, Double(v) + 0.5)) ?? PixelPoint(-1, -1)
                luma[v * g.widthPx + u] = UInt8(min(255, max(0, sampler.lumaAt(p) + 0.5)))
            }
        }
        guard g.chroma.hasChroma else { return map }
        let cb = output.cb.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let cr = output.cr.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let sx = Double(g.widthPx) / Double(g.chromaWidthPx), sy = Double(g.heightPx) / Double(g.chromaHeightPx)
        for v in 0..<g.chromaHeightPx {
            for u in 0..<g.chromaWidthPx {
                let q = PixelPoint((Double(u) + 0.5) * sx, (Double(v) + 0.5) * sy)
                let p = map.apply(q) ?? PixelPoint(-1, -1)
                let (b, r) = sampler.chromaAt(p)
                cb[v * g.chromaWidthPx + u] = UInt8(min(255, max(0, b + 0.5)))
                cr[v * g.chromaWidthPx + u] = UInt8(min(255, max(0, r + 0.5)))
            }
        }
        return map
    }
}
