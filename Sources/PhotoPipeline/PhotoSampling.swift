import ColorcamCore
import Detect

/// Reads a frame through a photo's homography: the model's L input (rectified, any size) and a small luma
/// thumbnail used to notice that a photo's content changed.
///
/// Coordinates: frame pixel centres at `i + 0.5`; the homography maps rectified (output) coordinates to frame
/// coordinates as `Rectifier.homography` does. Samples outside the frame clamp to its edge.
/// A value type over borrowed plane pointers: valid only while the frame is alive and unchanged; no allocation.
struct FrameSampler {
    let luma: UnsafePointer<UInt8>
    let cb: UnsafePointer<UInt8>?
    let cr: UnsafePointer<UInt8>?
    let widthPx: Int, heightPx: Int
    let chromaWidthPx: Int, chromaHeightPx: Int
    let chromaScaleX: Double, chromaScaleY: Double

    init(_ frame: FrameBuffer) {
        let g = frame.geometry
        luma = UnsafePointer(frame.luma.baseAddress!.assumingMemoryBound(to: UInt8.self))
        widthPx = g.widthPx; heightPx = g.heightPx
        chromaWidthPx = g.chromaWidthPx; chromaHeightPx = g.chromaHeightPx
        if g.chroma.hasChroma {
            cb = UnsafePointer(frame.cb.baseAddress!.assumingMemoryBound(to: UInt8.self))
            cr = UnsafePointer(frame.cr.baseAddress!.assumingMemoryBound(to: UInt8.self))
            chromaScaleX = Double(g.chromaWidthPx) / Double(g.widthPx)
            chromaScaleY = Double(g.chromaHeightPx) / Double(g.heightPx)
        } else {
            cb = nil; cr = nil; chromaScaleX = 0; chromaScaleY = 0
        }
    }

    /// Bilinear sample of an 8-bit plane at continuous coordinates, clamped at the borders.
    @inline(__always) static func bilinear(
        _ plane: UnsafePointer<UInt8>, _ w: Int, _ h: Int,
        _ x: Double, _ y: Double
    ) -> Float {
        let fx = min(max(x - 0.5, 0), Double(w - 1)), fy = min(max(y - 0.5, 0), Double(h - 1))
        let x0 = Int(fx), y0 = Int(fy)
        let x1 = min(x0 + 1, w - 1), y1 = min(y0 + 1, h - 1)
        let ax = Float(fx - Double(x0)), ay = Float(fy - Double(y0))
        let top = Float(plane[y0 * w + x0]) + (Float(plane[y0 * w + x1]) - Float(plane[y0 * w + x0])) * ax
        let bottom = Float(plane[y1 * w + x0]) + (Float(plane[y1 * w + x1]) - Float(plane[y1 * w + x0])) * ax
        return top + (bottom - top) * ay
    }

    @inline(__always) func lumaAt(_ p: PixelPoint) -> Float {
        Self.bilinear(luma, widthPx, heightPx, p.x, p.y)
    }

    /// L* at frame point `p` (bilinear Y', Cb, Cr; neutral chroma for a mono frame).
    @inline(__always) func lightnessAt(_ p: PixelPoint, codec: PixelCodec) -> Float {
        let (cb, cr) = chromaAt(p) ?? (128, 128)
        return codec.lightness(y: lumaAt(p), cb: cb, cr: cr)
    }

    /// Bilinear (Cb, Cr) at frame point `p`; nil for a frame without chroma.
    @inline(__always) func chromaAt(_ p: PixelPoint) -> (Float, Float)? {
        guard let cb, let cr else { return nil }
        let cx = p.x * chromaScaleX, cy = p.y * chromaScaleY
        return (
            Self.bilinear(cb, chromaWidthPx, chromaHeightPx, cx, cy),
            Self.bilinear(cr, chromaWidthPx, chromaHeightPx, cx, cy)
        )
    }

    /// Fills `output` (`sizePx × sizePx`, row-major) with `L × scale + offset` sampled through `map`
    /// (output → frame, for an output of `sizePx × sizePx`).
    func rectifyLightness(
        through map: Homography, sizePx n: Int, scale: Float, offset: Float,
        codec: PixelCodec, into output: UnsafeMutablePointer<Float>
    ) {
        for v in 0..<n {
            for u in 0..<n {
                let p = map.apply(PixelPoint(Double(u) + 0.5, Double(v) + 0.5)) ?? PixelPoint(-1, -1)
                output[v * n + u] = lightnessAt(p, codec: codec) * scale + offset
            }
        }
    }

    /// Side of the thumbnail grid.
    static let thumbnailSide = 32

    /// A `thumbnailSide²` grid of mean luma (2×2 supersampled per cell) through `map` (output → frame, for an output
    /// of `thumbnailSide²`), for change detection.
    func thumbnail(through map: Homography, into output: UnsafeMutablePointer<Float>) {
        let n = Self.thumbnailSide
        for v in 0..<n {
            for u in 0..<n {
                @inline(__always) func at(_ du: Double, _ dv: Double) -> Float {
                    lumaAt(map.apply(PixelPoint(Double(u) + du, Double(v) + dv)) ?? PixelPoint(-1, -1))
                }
                output[v * n + u] = (at(0.25, 0.25) + at(0.75, 0.25) + at(0.25, 0.75) + at(0.75, 0.75)) / 4
            }
        }
    }
}

/// How far apart two thumbnails are, in units of their contrast: each is pooled to 8×8 block means (4×4 cells each)
/// and normalised to zero mean and unit standard deviation, and the mean absolute difference is taken. So a
/// sub-pixel misregistration of texture, a brightness or contrast change (the photo moving through the lighting
/// gradient) hardly count, while a changed picture or a hand over it does (≈ 1 for unrelated pictures).
@inline(__always) func thumbnailDistance(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>) -> Float {
    let side = FrameSampler.thumbnailSide, cell = side / 8
    var pa = SIMD64<Float>(), pb = SIMD64<Float>()
    for by in 0..<8 {
        for bx in 0..<8 {
            var sa: Float = 0, sb: Float = 0
            for y in (by * cell)..<((by + 1) * cell) {
                for x in (bx * cell)..<((bx + 1) * cell) { sa += a[y * side + x]; sb += b[y * side + x] }
            }
            pa[by * 8 + bx] = sa; pb[by * 8 + bx] = sb
        }
    }
    @inline(__always) func normalised(_ v: SIMD64<Float>) -> SIMD64<Float> {
        let centred = v - SIMD64(repeating: v.sum() / 64)
        let sd = ((centred * centred).sum() / 64).squareRoot()
        return sd > 1e-3 ? centred / sd : centred
    }
    let d = normalised(pa) - normalised(pb)
    return d.replacing(with: -d, where: d .< 0).sum() / 64
}

/// How much the most changed part of two thumbnails differs, in units of their contrast: each thumbnail is normalised
/// to zero mean and unit standard deviation; a cell counts by how far it lies outside the range of the other
/// thumbnail's 3 × 3 cells around it (both ways, the larger), so a misregistration of up to a cell — a few pixels of
/// the print — counts nothing; those counts are averaged over 8 × 8 blocks (4 × 4 cells each) and the largest block
/// is the result. A hand over a twentieth of a print, gone from one view, moves a block by ~1; the same still print
/// seen twice stays under ~0.5. Where `thumbnailDistance` averages a small change away, this finds it.
func thumbnailLocalChange(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>) -> Float {
    let side = FrameSampler.thumbnailSide, count = side * side
    @inline(__always) func moments(_ t: UnsafePointer<Float>) -> (mean: Float, scale: Float) {
        var sum: Float = 0, squares: Float = 0
        for i in 0..<count { sum += t[i]; squares += t[i] * t[i] }
        let mean = sum / Float(count)
        let sd = max(0, squares / Float(count) - mean * mean).squareRoot()
        return (mean, sd > 1e-3 ? 1 / sd : 1)
    }
    let (ma, sa) = moments(a), (mb, sb) = moments(b)
    // How far cell (x, y) of `t` (normalised) lies outside the range of `o`'s 3×3 neighbourhood (normalised).
    @inline(__always) func outside(
        _ t: UnsafePointer<Float>, _ mt: Float, _ st: Float, _ o: UnsafePointer<Float>, _ mo: Float, _ so: Float,
        _ x: Int, _ y: Int
    ) -> Float {
        var lo = Float.greatestFiniteMagnitude, hi = -Float.greatestFiniteMagnitude
        for ny in max(0, y - 1)...min(side - 1, y + 1) {
            for nx in max(0, x - 1)...min(side - 1, x + 1) {
                let v = o[ny * side + nx]
                lo = min(lo, v); hi = max(hi, v)
            }
        }
        let value = (t[y * side + x] - mt) * st
        return max(0, value - (hi - mo) * so, (lo - mo) * so - value)
    }
    var largest: Float = 0
    let cell = side / 8
    for by in 0..<8 {
        for bx in 0..<8 {
            var sum: Float = 0
            for y in (by * cell)..<((by + 1) * cell) {
                for x in (bx * cell)..<((bx + 1) * cell) {
                    sum += max(outside(a, ma, sa, b, mb, sb, x, y), outside(b, mb, sb, a, ma, sa, x, y))
                }
            }
            largest = max(largest, sum / Float(cell * cell))
        }
    }
    return largest
}
