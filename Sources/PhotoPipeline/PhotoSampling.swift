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
    /// Values of a thumbnail: the `thumbnailSide²` grid, then its outline's contrast (`4 × thumbnailSide`).
    static let thumbnailCount = thumbnailSide * thumbnailSide + 4 * thumbnailSide

    /// A thumbnail through `map` (output → frame, for an output of `thumbnailSide²`), for change detection:
    /// `thumbnailSide²` cells of mean luma (2×2 supersampled per cell), row-major, then the print's outline
    /// contrast — |luma one cell inside − luma one cell outside| at `thumbnailSide` points along each side (top left
    /// to right, right top to bottom, bottom left to right, left top to bottom). Writes `thumbnailCount` values.
    func thumbnail(through map: Homography, into output: UnsafeMutablePointer<Float>) {
        let n = Self.thumbnailSide
        @inline(__always) func luma(_ u: Double, _ v: Double) -> Float {
            lumaAt(map.apply(PixelPoint(u, v)) ?? PixelPoint(-1, -1))
        }
        for v in 0..<n {
            for u in 0..<n {
                let x = Double(u), y = Double(v)
                output[v * n + u] =
                    (luma(x + 0.25, y + 0.25) + luma(x + 0.75, y + 0.25) + luma(x + 0.25, y + 0.75)
                        + luma(x + 0.75, y + 0.75)) / 4
            }
        }
        let outline = output + n * n, far = Double(n)
        for i in 0..<n {
            let t = Double(i) + 0.5
            outline[i] = abs(luma(t, 1) - luma(t, -1))
            outline[n + i] = abs(luma(far - 1, t) - luma(far + 1, t))
            outline[2 * n + i] = abs(luma(t, far - 1) - luma(t, far + 1))
            outline[3 * n + i] = abs(luma(1, t) - luma(-1, t))
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

/// How a print's outline changed where the print changed in one place, between thumbnails (`FrameSampler.thumbnail`)
/// of two views of it.
enum OutlineChange {
    /// No local change, none beside the edge, or the edge clearer beside some changed blocks and less clear beside
    /// others (a hand that moved, not one that came or went).
    case none
    /// Clearer now beside every changed block on the edge: what covered the print in the view before has gone.
    case regained
    /// Less clear now beside every changed block on the edge: something has come over the print.
    case lost
}

/// `OutlineChange` from `before` to `now`: the print changed in one place (its most changed block of
/// `thumbnailBlockChanges` above `threshold`), and along the edge beside the blocks that changed (by more than half
/// `threshold`) its outline's contrast rose, or fell, beside every one. A hand over a print reaches it across its
/// edge, where paper meets hand instead of table; so the view in which the edge there is the clearer is the one
/// without it — whatever the cover mask can tell (a pale hand on a sepia print has the print's tone).
func outlineChange(now: UnsafePointer<Float>, before: UnsafePointer<Float>, threshold: Float) -> OutlineChange {
    let blocks = thumbnailBlockChanges(now, before)
    guard blocks.max() > threshold else { return .none }
    let n = FrameSampler.thumbnailSide, cell = n / 8
    let outlineNow = now + n * n, outlineBefore = before + n * n
    // Per block on the edge: its outline's contrast now minus before (corner blocks take two sides).
    var gain = SIMD64<Float>(), onEdge = SIMD64<Float>()
    for side in 0..<4 {
        for i in 0..<n {
            let along = i / cell
            let block: Int
            switch side {
            case 0: block = along  // top row
            case 1: block = along * 8 + 7  // right column
            case 2: block = 56 + along  // bottom row
            default: block = along * 8  // left column
            }
            gain[block] += outlineNow[side * n + i] - outlineBefore[side * n + i]
            onEdge[block] = 1
        }
    }
    let changed = (blocks .> threshold / 2) .& (onEdge .> 0)
    guard any(changed) else { return .none }
    if !any(changed .& (gain .<= 0)) { return .regained }
    if !any(changed .& (gain .>= 0)) { return .lost }
    return .none
}

/// How much each part of two thumbnails (their grids) differs, in units of their contrast: each thumbnail is
/// normalised to zero mean and unit standard deviation; a cell counts by how far it lies outside the range of the other
/// thumbnail's 3 × 3 cells around it (both ways, the larger), so a misregistration of up to a cell — a few pixels of
/// the print — counts nothing; those counts are averaged over 8 × 8 blocks (4 × 4 cells each), row-major. A hand
/// over a twentieth of a print, gone from one view, moves its most changed block by ~1; the same still print seen
/// twice stays under ~0.5. Where `thumbnailDistance` averages a small change away, this finds it.
func thumbnailBlockChanges(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>) -> SIMD64<Float> {
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
    var blocks = SIMD64<Float>()
    let cell = side / 8
    for by in 0..<8 {
        for bx in 0..<8 {
            var sum: Float = 0
            for y in (by * cell)..<((by + 1) * cell) {
                for x in (bx * cell)..<((bx + 1) * cell) {
                    sum += max(outside(a, ma, sa, b, mb, sb, x, y), outside(b, mb, sb, a, ma, sa, x, y))
                }
            }
            blocks[by * 8 + bx] = sum / Float(cell * cell)
        }
    }
    return blocks
}
