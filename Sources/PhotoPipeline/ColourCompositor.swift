import ColorcamCore
import Detect

/// Writes a photo's cached colours (ab on a rectified grid) into a frame through the photo's current corners,
/// keeping the frame's own lightness: every output pixel's L* is the live frame's L* (to within the 8-bit
/// step), its a*b* come from the cache, bilinear on the rectified grid.
///
/// Per chroma block (2×2 luma pixels in 4:2:0): each pixel's target colour is Lab(L_live, a, b), gamut-mapped at
/// constant luminance; the block's Cb/Cr are the mean of its pixels' targets (the format has one chroma sample per
/// block); each pixel's Y' is then chosen, against that shared chroma, so a decoder's L* lands nearest L_live.
/// The photo's edge is feathered over `featherPx` frame pixels (alpha 0 on the outline, 1 inside), blending towards
/// the background (original chroma or neutral grey).
///
/// Ownership and threading: a namespace of pure functions; the caller owns the frame and the grid for the call,
/// passes the frame's original chroma planes separately (`originalCb`/`originalCr`, the source of L_live), and
/// gets no allocation.
enum ColourCompositor {
    struct Grid {
        /// a plane then b plane, `widthPx × heightPx` each, multiplied by `scale` on read.
        let ab: UnsafePointer<Float>
        let widthPx: Int
        let heightPx: Int
        let scale: Float

        @inline(__always) func sample(_ q: PixelPoint) -> (Float, Float) {
            let fx = min(max(q.x - 0.5, 0), Double(widthPx - 1)), fy = min(max(q.y - 0.5, 0), Double(heightPx - 1))
            let x0 = Int(fx), y0 = Int(fy)
            let x1 = min(x0 + 1, widthPx - 1), y1 = min(y0 + 1, heightPx - 1)
            let ax = Float(fx - Double(x0)), ay = Float(fy - Double(y0))
            @inline(__always) func at(_ plane: UnsafePointer<Float>) -> Float {
                let top = plane[y0 * widthPx + x0] + (plane[y0 * widthPx + x1] - plane[y0 * widthPx + x0]) * ax
                let bottom = plane[y1 * widthPx + x0] + (plane[y1 * widthPx + x1] - plane[y1 * widthPx + x0]) * ax
                return top + (bottom - top) * ay
            }
            return (at(ab) * scale, at(ab + widthPx * heightPx) * scale)
        }
    }

    /// Composites `grid` into `frame` at `quad`. `originalCb`/`originalCr` are the frame's chroma before any
    /// compositing; `backgroundCb`/`backgroundCr` are what the frame's chroma planes hold outside photos (the
    /// original, or 128 for grey). Returns false for a degenerate quad or a frame without chroma (untouched).
    @discardableResult
    static func composite(_ grid: Grid, into frame: FrameBuffer, at quad: Quad,
                          originalCb: UnsafePointer<UInt8>, originalCr: UnsafePointer<UInt8>,
                          codec: PixelCodec, featherPx: Double) -> Bool {
        let g = frame.geometry
        guard g.chroma.hasChroma,
              let toGrid = Rectifier.homography(for: quad, widthPx: grid.widthPx, heightPx: grid.heightPx)?.inverse
        else { return false }
        let shift = g.chroma.subsamplingShift
        let blockW = 1 << shift.x, blockH = 1 << shift.y
        let scale = (quad.area / Double(grid.widthPx * grid.heightPx)).squareRoot()
        let feather = max(1e-6, featherPx)
        let gw = Double(grid.widthPx), gh = Double(grid.heightPx)
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        for i in 0..<4 {
            minX = min(minX, quad[i].x); maxX = max(maxX, quad[i].x)
            minY = min(minY, quad[i].y); maxY = max(maxY, quad[i].y)
        }
        let x0 = max(0, Int(minX.rounded(.down))), x1 = min(g.widthPx - 1, Int(maxX.rounded(.up)))
        let y0 = max(0, Int(minY.rounded(.down))), y1 = min(g.heightPx - 1, Int(maxY.rounded(.up)))
        guard x0 <= x1, y0 <= y1 else { return true }
        let luma = frame.luma.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let cbPlane = frame.cb.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let crPlane = frame.cr.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let (yMin, yMax): (Float, Float) = codec.encoding.fullRange ? (0, 255) : (16, 235)

        for cy in (y0 >> shift.y)...(y1 >> shift.y) {
            for cx in (x0 >> shift.x)...(x1 >> shift.x) {
                let c = cy * g.chromaWidthPx + cx
                let cbOrig = Float(originalCb[c]), crOrig = Float(originalCr[c])
                let cbBack = Float(cbPlane[c]), crBack = Float(crPlane[c])
                // Up to 4 pixels per block: alpha, target Y', live L*.
                var alpha = SIMD4<Float>(repeating: 0), targetY = SIMD4<Float>(repeating: 0)
                var live = SIMD4<Float>(repeating: 0)
                var cbSum: Float = 0, crSum: Float = 0, pixels = 0, touched = false
                for dy in 0..<blockH {
                    let y = (cy << shift.y) + dy
                    guard y < g.heightPx else { continue }
                    for dx in 0..<blockW {
                        let x = (cx << shift.x) + dx
                        guard x < g.widthPx else { continue }
                        let k = dy * 2 + dx
                        pixels += 1
                        guard let q = toGrid.apply(PixelPoint(Double(x) + 0.5, Double(y) + 0.5)) else {
                            cbSum += cbBack; crSum += crBack; continue
                        }
                        let inside = min(min(q.x, gw - q.x), min(q.y, gh - q.y)) * scale
                        let w = Float(min(1, max(0, inside / feather)))
                        guard w > 0 else { cbSum += cbBack; crSum += crBack; continue }
                        touched = true
                        let yLive = Float(luma[y * g.widthPx + x])
                        let l = codec.lightness(y: yLive, cb: cbOrig, cr: crOrig)
                        let (a, b) = grid.sample(q)
                        let target = codec.codes(codec.rgb(L: l, a: a, b: b))
                        alpha[k] = w; live[k] = l
                        targetY[k] = w * target.x + (1 - w) * yLive
                        cbSum += w * target.y + (1 - w) * cbBack
                        crSum += w * target.z + (1 - w) * crBack
                    }
                }
                guard touched else { continue }
                let cbOut = min(255, max(0, (cbSum / Float(pixels)).rounded()))
                let crOut = min(255, max(0, (crSum / Float(pixels)).rounded()))
                cbPlane[c] = UInt8(cbOut); crPlane[c] = UInt8(crOut)
                for dy in 0..<blockH {
                    let y = (cy << shift.y) + dy
                    guard y < g.heightPx else { continue }
                    for dx in 0..<blockW {
                        let x = (cx << shift.x) + dx
                        let k = dy * 2 + dx
                        guard x < g.widthPx, alpha[k] > 0 else { continue }
                        var best = min(yMax, max(yMin, targetY[k].rounded()))
                        if alpha[k] >= 1 {
                            best = nearestLuma(start: best, lightness: live[k], cb: cbOut, cr: crOut,
                                               codec: codec, range: yMin...yMax)
                        }
                        luma[y * g.widthPx + x] = UInt8(best)
                    }
                }
            }
        }
        return true
    }

    /// The Y' code near `start` whose decoded L* (with chroma `cb`, `cr`) is nearest `lightness`.
    @inline(__always) static func nearestLuma(start: Float, lightness: Float, cb: Float, cr: Float,
                                              codec: PixelCodec, range: ClosedRange<Float>) -> Float {
        var best = start
        let startLightness = codec.lightness(y: start, cb: cb, cr: cr)
        var bestError = abs(startLightness - lightness)
        guard bestError > 0.2 else { return best }
        let step: Float = startLightness < lightness ? 1 : -1
        var candidate = start + step
        while range.contains(candidate) {
            let error = abs(codec.lightness(y: candidate, cb: cb, cr: cr) - lightness)
            guard error < bestError else { break }
            best = candidate; bestError = error
            candidate += step
        }
        return best
    }
}
