import ColorcamCore

/// Pastes a processed rectified photo back into a frame through the photo's current corners, blending its edge over
/// `featherPx` frame pixels so no seam shows (alpha rises linearly from 0 at the quad's outline to 1 at
/// `featherPx` inside).
///
/// The rectified image maps onto the quad as in `Rectifier` (its top-left corner on `quad[0]`, clockwise).
/// Ownership and threading: a stateless namespace; `composite` reads `image`, writes only `frame` (inside the
/// quad's bounding box) and allocates nothing. The caller owns both buffers for the call.
public enum Compositor {
    /// Blends `image` into `frame` at `quad`.
    /// - Returns: false (frame untouched) for a degenerate quad.
    @discardableResult
    public static func composite(_ image: FrameBuffer, into frame: FrameBuffer, at quad: Quad,
                                 featherPx: Double = 2.0) -> Bool {
        let ig = image.geometry, fg = frame.geometry
        guard let toImage = Rectifier.homography(for: quad, widthPx: ig.widthPx, heightPx: ig.heightPx)?.inverse
        else { return false }
        // Frame pixels per image pixel, for measuring the feather in frame pixels.
        let scale = (quad.area / Double(ig.widthPx * ig.heightPx)).squareRoot()
        let feather = max(1e-6, featherPx)
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        for i in 0..<4 {
            minX = min(minX, quad[i].x); maxX = max(maxX, quad[i].x)
            minY = min(minY, quad[i].y); maxY = max(maxY, quad[i].y)
        }
        let imageSampler = PlaneSampler(image)
        let iw = Double(ig.widthPx), ih = Double(ig.heightPx)

        /// Alpha and image position for the frame point `p`.
        @inline(__always) func weight(_ p: PixelPoint) -> (Double, PixelPoint) {
            guard let q = toImage.apply(p) else { return (0, .zero) }
            let inside = min(min(q.x, iw - q.x), min(q.y, ih - q.y)) * scale
            return (min(1, max(0, inside / feather)), q)
        }

        let x0 = max(0, Int(minX.rounded(.down))), x1 = min(fg.widthPx - 1, Int(maxX.rounded(.up)))
        let y0 = max(0, Int(minY.rounded(.down))), y1 = min(fg.heightPx - 1, Int(maxY.rounded(.up)))
        guard x0 <= x1, y0 <= y1 else { return true }
        let luma = frame.luma.baseAddress!.assumingMemoryBound(to: UInt8.self)
        for y in y0...y1 {
            for x in x0...x1 {
                let (alpha, q) = weight(PixelPoint(Double(x) + 0.5, Double(y) + 0.5))
                guard alpha > 0 else { continue }
                let k = y * fg.widthPx + x
                let blended = alpha * imageSampler.lumaAt(q) + (1 - alpha) * Double(luma[k])
                luma[k] = UInt8(min(255, max(0, blended + 0.5)))
            }
        }
        guard fg.chroma.hasChroma else { return true }
        let cb = frame.cb.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let cr = frame.cr.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let sx = Double(fg.widthPx) / Double(fg.chromaWidthPx), sy = Double(fg.heightPx) / Double(fg.chromaHeightPx)
        let cx0 = Int(Double(x0) / sx), cx1 = min(fg.chromaWidthPx - 1, Int(Double(x1) / sx))
        let cy0 = Int(Double(y0) / sy), cy1 = min(fg.chromaHeightPx - 1, Int(Double(y1) / sy))
        for cy in cy0...cy1 {
            for cx in cx0...cx1 {
                let p = PixelPoint((Double(cx) + 0.5) * sx, (Double(cy) + 0.5) * sy)
                let (alpha, q) = weight(p)
                guard alpha > 0 else { continue }
                let (b, r) = imageSampler.chromaAt(q)
                let k = cy * fg.chromaWidthPx + cx
                cb[k] = UInt8(min(255, max(0, alpha * b + (1 - alpha) * Double(cb[k]) + 0.5)))
                cr[k] = UInt8(min(255, max(0, alpha * r + (1 - alpha) * Double(cr[k]) + 0.5)))
            }
        }
        return true
    }
}
