import ColorcamCore
import Detect

/// Writes a photo's cached colours (ab on a rectified grid) into a frame through the photo's current corners,
/// keeping the frame's own lightness: every output pixel's L* is the live frame's L* (to within the 8-bit
/// step), its a*b* come from the cache, bilinear on the rectified grid.
///
/// Per chroma block (2×2 luma pixels in 4:2:0; the format has one chroma sample per block): the block's colour is
/// Lab(mean live L*, a, b) with ab at the block's centre, gamut-mapped at constant luminance, which gives its Cb/Cr;
/// each pixel's Y' is then solved, against that shared chroma, so a decoder sees the pixel's own live luminance
/// (so L* within the 8-bit step of L_live).
/// Where something lies over the print (`cover`, a `CoverMask`: a hand), the frame keeps its live colour.
/// The photo's edge is feathered over `featherPx` frame pixels (alpha 0 on the outline, 1 inside): the chroma blends
/// towards the background (original chroma or neutral grey) while every pixel inside keeps its live luminance.
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
    /// original, or 128 for grey); `cover` marks the print's covered cells, whose blocks get their original chroma
    /// back. Returns false for a degenerate quad or a frame without chroma (untouched).
    @discardableResult
    static func composite(
        _ grid: Grid, into frame: FrameBuffer, at quad: Quad,
        originalCb: UnsafePointer<UInt8>, originalCr: UnsafePointer<UInt8>,
        codec: PixelCodec, featherPx: Double, cover: UnsafePointer<UInt64>? = nil
    ) -> Bool {
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

        let interiorPx = feather + 0.5 * Double(blockW + blockH)
        // Live codes this close to the ends may clip once coloured (checked per block, see `reachable`).
        let extremeLow = yMin + 24, extremeHigh = yMax - 24
        // Per block, up to 4 pixels: alpha, live Y', live luminance (scalar slots: no vector lane writes).
        return withUnsafeTemporaryAllocation(of: Float.self, capacity: 12) { scratch in
            let alpha = scratch.baseAddress!, liveY = alpha + 4, live = alpha + 8
            for cy in (y0 >> shift.y)...(y1 >> shift.y) {
                for cx in (x0 >> shift.x)...(x1 >> shift.x) {
                    // The block's centre decides: clearly outside → skip; clearly inside → alpha 1 for every pixel;
                    // near the outline → per-pixel alpha.
                    let centre = PixelPoint(
                        Double(cx << shift.x) + 0.5 * Double(blockW),
                        Double(cy << shift.y) + 0.5 * Double(blockH))
                    guard let qc = toGrid.apply(centre) else { continue }
                    let centreInside = min(min(qc.x, gw - qc.x), min(qc.y, gh - qc.y)) * scale
                    if centreInside < -interiorPx { continue }
                    let interior = centreInside >= interiorPx
                    let c = cy * g.chromaWidthPx + cx
                    if let cover, CoverMask.isCovered(cover, u: qc.x / gw, v: qc.y / gh) {
                        cbPlane[c] = originalCb[c]; crPlane[c] = originalCr[c]
                        continue
                    }
                    let cbOrig = Float(originalCb[c]), crOrig = Float(originalCr[c])
                    let originalChroma = codec.chroma(cb: cbOrig, cr: crOrig)
                    // Most blocks: 4:2:0, wholly inside the photo and the frame, no pixel near the code range's
                    // ends. The same arithmetic as below with every alpha 1, four pixels at a time.
                    if interior && blockW == 2 && blockH == 2 && 2 * cy + 1 < g.heightPx && 2 * cx + 1 < g.widthPx {
                        let top = 2 * cy * g.widthPx + 2 * cx, bottom = top + g.widthPx
                        let codes = SIMD4<Float>(
                            Float(luma[top]), Float(luma[top + 1]), Float(luma[bottom]), Float(luma[bottom + 1]))
                        if max(max(codes[0], codes[1]), max(codes[2], codes[3])) <= extremeHigh
                            && min(min(codes[0], codes[1]), min(codes[2], codes[3])) >= extremeLow
                        {
                            let live4 = codec.luminance4(y: codes, chroma: originalChroma)
                            let (a, b) = grid.sample(qc)
                            let meanLuminance = (live4[0] + live4[1] + live4[2] + live4[3]) / 4
                            let target = codec.codes(
                                codec.rgb(L: codec.lightness(luminance: meanLuminance), a: a, b: b))
                            let greyY = codec.greyLuma(luminance: meanLuminance)
                            // The general loop's blend with weight 4 of 4 pixels, (4 · t + 0 · back) / 4, is t exactly.
                            let cbOut = Float(UInt8(min(255, max(0, target.y)) + 0.5))
                            let crOut = Float(UInt8(min(255, max(0, target.z)) + 0.5))
                            cbPlane[c] = UInt8(cbOut); crPlane[c] = UInt8(crOut)
                            let value = codec.luma4(
                                forLuminance: live4, chroma: codec.chroma(cb: cbOut, cr: crOut),
                                start: codes + (target.x - greyY))
                            @inline(__always) func code(_ k: Int) -> UInt8 {
                                UInt8(min(yMax, max(yMin, value[k])) + 0.5)
                            }
                            luma[top] = code(0); luma[top + 1] = code(1)
                            luma[bottom] = code(2); luma[bottom + 1] = code(3)
                            continue
                        }
                    }
                    let cbBack = Float(cbPlane[c]), crBack = Float(crPlane[c])
                    alpha[0] = 0; alpha[1] = 0; alpha[2] = 0; alpha[3] = 0
                    var pixels = 0, touched: Float = 0, weight: Float = 0, luminanceSum: Float = 0
                    for dy in 0..<blockH {
                        let y = (cy << shift.y) + dy
                        guard y < g.heightPx else { continue }
                        for dx in 0..<blockW {
                            let x = (cx << shift.x) + dx
                            guard x < g.widthPx else { continue }
                            let k = dy * 2 + dx
                            pixels += 1
                            var w: Float = 1
                            if !interior {
                                guard let q = toGrid.apply(PixelPoint(Double(x) + 0.5, Double(y) + 0.5)) else {
                                    continue
                                }
                                let inside = min(min(q.x, gw - q.x), min(q.y, gh - q.y)) * scale
                                w = Float(min(1, max(0, inside / feather)))
                                guard w > 0 else { continue }
                            }
                            let yLive = Float(luma[y * g.widthPx + x])
                            let t = codec.luminance(y: yLive, chroma: originalChroma)
                            alpha[k] = w; liveY[k] = yLive; live[k] = t
                            weight += w; luminanceSum += t; touched += 1
                        }
                    }
                    guard weight > 0 else { continue }
                    // The block's colour: ab at its centre, at the mean live luminance of its photo pixels.
                    let (a, b) = grid.sample(qc)
                    let meanLuminance = luminanceSum / touched
                    let target = codec.codes(codec.rgb(L: codec.lightness(luminance: meanLuminance), a: a, b: b))
                    let greyY = codec.greyLuma(luminance: meanLuminance)
                    var extreme = false
                    for k in 0..<4 where alpha[k] > 0 && (liveY[k] > extremeHigh || liveY[k] < extremeLow) {
                        extreme = true
                    }
                    /// True when every photo pixel of the block decodes within 0.9 L* of its live L* under (cb, cr).
                    func reachable(_ cb: Float, _ cr: Float) -> Bool {
                        for k in 0..<4 where alpha[k] > 0 {
                            let start = liveY[k] + alpha[k] * (target.x - greyY)
                            let y = min(
                                yMax, max(yMin, codec.luma(forLuminance: live[k], cb: cb, cr: cr, start: start) + 0.5))
                            let got = codec.lightness(luminance: codec.luminance(y: y.rounded(.down), cb: cb, cr: cr))
                            if abs(got - codec.lightness(luminance: live[k])) > 0.9 { return false }
                        }
                        return true
                    }
                    let outside = Float(pixels) - weight
                    var cbOut = Float(
                        UInt8(min(255, max(0, (weight * target.y + outside * cbBack) / Float(pixels))) + 0.5))
                    var crOut = Float(
                        UInt8(min(255, max(0, (weight * target.z + outside * crBack) / Float(pixels))) + 0.5))
                    // Near white or black a pixel may not reach its luminance under this chroma (R'G'B' clip): then
                    // the block's chroma is pulled towards neutral until every pixel can.
                    if extreme {
                        for _ in 0..<4 where !reachable(cbOut, crOut) {
                            cbOut = (128 + (cbOut - 128) * 0.5).rounded()
                            crOut = (128 + (crOut - 128) * 0.5).rounded()
                        }
                    }
                    cbPlane[c] = UInt8(cbOut); crPlane[c] = UInt8(crOut)
                    let outChroma = codec.chroma(cb: cbOut, cr: crOut)
                    // Each pixel's Y': its own live luminance under the block's new chroma.
                    for dy in 0..<blockH {
                        let y = (cy << shift.y) + dy
                        guard y < g.heightPx else { continue }
                        for dx in 0..<blockW {
                            let x = (cx << shift.x) + dx
                            let k = dy * 2 + dx
                            guard x < g.widthPx, alpha[k] > 0 else { continue }
                            // Feathered pixels too: the block's chroma is a blend, the pixel's luminance stays its own.
                            let start = liveY[k] + alpha[k] * (target.x - greyY)
                            let value = codec.luma(forLuminance: live[k], chroma: outChroma, start: start)
                            luma[y * g.widthPx + x] = UInt8(min(yMax, max(yMin, value)) + 0.5)
                        }
                    }
                }
            }
            return true
        }
    }
}
