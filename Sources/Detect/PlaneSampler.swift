import ColorcamCore

/// Bilinear reads from a frame's 8-bit planes in frame pixel coordinates (pixel centres at `i + 0.5`), clamped at the
/// borders. A value type over borrowed pointers: valid only while the frame it was made from is alive and unchanged.
struct PlaneSampler {
    let luma: UnsafePointer<UInt8>
    let cb: UnsafePointer<UInt8>?
    let cr: UnsafePointer<UInt8>?
    let widthPx: Int
    let heightPx: Int
    let chromaWidthPx: Int
    let chromaHeightPx: Int
    /// Chroma plane pixels per frame pixel in x and y (0.5 for 4:2:0).
    let chromaScaleX: Double
    let chromaScaleY: Double

    init(_ frame: FrameBuffer) {
        let g = frame.geometry
        luma = UnsafePointer(frame.luma.baseAddress!.assumingMemoryBound(to: UInt8.self))
        widthPx = g.widthPx
        heightPx = g.heightPx
        if g.chroma.hasChroma {
            cb = UnsafePointer(frame.cb.baseAddress!.assumingMemoryBound(to: UInt8.self))
            cr = UnsafePointer(frame.cr.baseAddress!.assumingMemoryBound(to: UInt8.self))
        } else {
            cb = nil
            cr = nil
        }
        chromaWidthPx = g.chromaWidthPx
        chromaHeightPx = g.chromaHeightPx
        chromaScaleX = g.chroma.hasChroma ? Double(g.chromaWidthPx) / Double(g.widthPx) : 0
        chromaScaleY = g.chroma.hasChroma ? Double(g.chromaHeightPx) / Double(g.heightPx) : 0
    }

    /// Bilinear sample of `plane` (`w × h`) at continuous coordinates `(x, y)` (pixel centres at +0.5).
    @inline(__always) static func bilinear(
        _ plane: UnsafePointer<UInt8>, _ w: Int, _ h: Int,
        _ x: Double, _ y: Double
    ) -> Double {
        let fx = min(max(x - 0.5, 0), Double(w - 1)), fy = min(max(y - 0.5, 0), Double(h - 1))
        let x0 = Int(fx), y0 = Int(fy)
        let x1 = min(x0 + 1, w - 1), y1 = min(y0 + 1, h - 1)
        let ax = fx - Double(x0), ay = fy - Double(y0)
        let top = Double(plane[y0 * w + x0]) * (1 - ax) + Double(plane[y0 * w + x1]) * ax
        let bottom = Double(plane[y1 * w + x0]) * (1 - ax) + Double(plane[y1 * w + x1]) * ax
        return top * (1 - ay) + bottom * ay
    }

    @inline(__always) func lumaAt(_ p: PixelPoint) -> Double {
        PlaneSampler.bilinear(luma, widthPx, heightPx, p.x, p.y)
    }

    /// (Cb, Cr) at frame coordinates `p`; (128, 128) for mono frames.
    @inline(__always) func chromaAt(_ p: PixelPoint) -> (Double, Double) {
        guard let cb, let cr else { return (128, 128) }
        let x = p.x * chromaScaleX, y = p.y * chromaScaleY
        return (
            PlaneSampler.bilinear(cb, chromaWidthPx, chromaHeightPx, x, y),
            PlaneSampler.bilinear(cr, chromaWidthPx, chromaHeightPx, x, y)
        )
    }
}
