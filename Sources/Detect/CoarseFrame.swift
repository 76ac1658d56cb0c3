import ColorcamCore

/// A frame's luma and chroma box-downscaled to a coarse grid for the detector's candidate search.
///
/// The coarse grid is `factor` times smaller than the frame in each direction (factor = shorter side / 240,
/// at least 1), so a 640×480 frame becomes 320×240. Coarse pixel `(i, j)` covers frame pixels
/// `[i·factor, (i+1)·factor) × [j·factor, (j+1)·factor)`; a coarse coordinate times `factor` is a frame coordinate.
///
/// Ownership: the planes are allocated once in `init` for one frame geometry and freed in `deinit`; `load` refills
/// them without allocating. Threading: one thread at a time.
final class CoarseFrame {
    let geometry: FrameGeometry
    let factor: Int
    let widthPx: Int
    let heightPx: Int
    /// Luma, Cb and Cr planes, `widthPx × heightPx` floats each (Cb/Cr are 128-centred, zero for mono frames).
    let luma: UnsafeMutablePointer<Float>
    let cb: UnsafeMutablePointer<Float>
    let cr: UnsafeMutablePointer<Float>

    init(geometry: FrameGeometry) {
        self.geometry = geometry
        factor = max(1, min(geometry.widthPx, geometry.heightPx) / 240)
        widthPx = max(1, geometry.widthPx / factor)
        heightPx = max(1, geometry.heightPx / factor)
        let count = widthPx * heightPx
        luma = .allocate(capacity: count)
        cb = .allocate(capacity: count)
        cr = .allocate(capacity: count)
        luma.initialize(repeating: 0, count: count)
        cb.initialize(repeating: 0, count: count)
        cr.initialize(repeating: 0, count: count)
    }

    deinit {
        luma.deallocate()
        cb.deallocate()
        cr.deallocate()
    }

    /// Fills the coarse planes from `frame` (same geometry as `init`). Chroma is point-sampled at each coarse pixel's
    /// centre (for 4:2:0 at factor 2 that is exactly one chroma sample per coarse pixel).
    func load(from frame: FrameBuffer) {
        precondition(frame.geometry == geometry, "CoarseFrame geometry mismatch")
        let f = factor, fullWidth = geometry.widthPx
        let src = UnsafePointer(frame.luma.baseAddress!.assumingMemoryBound(to: UInt8.self))
        let scale = 1 / Float(f * f)
        if f == 2 {
            for j in 0..<heightPx {
                let out = luma + j * widthPx
                let r0 = src + 2 * j * fullWidth, r1 = r0 + fullWidth
                for i in 0..<widthPx {
                    let sum = Int(r0[2 * i]) + Int(r0[2 * i + 1]) + Int(r1[2 * i]) + Int(r1[2 * i + 1])
                    out[i] = Float(sum) * 0.25
                }
            }
        } else {
            loadLuma(src, factor: f, fullWidth: fullWidth, scale: scale)
        }
        loadChroma(from: frame)
    }

    private func loadLuma(_ src: UnsafePointer<UInt8>, factor f: Int, fullWidth: Int, scale: Float) {
        for j in 0..<heightPx {
            let out = luma + j * widthPx
            for i in 0..<widthPx {
                var sum = 0
                for dy in 0..<f {
                    let row = src + (j * f + dy) * fullWidth + i * f
                    for dx in 0..<f { sum += Int(row[dx]) }
                }
                out[i] = Float(sum) * scale
            }
        }
    }

    private func loadChroma(from frame: FrameBuffer) {
        let f = factor
        let count = widthPx * heightPx
        guard geometry.chroma.hasChroma else {
            cb.update(repeating: 0, count: count)
            cr.update(repeating: 0, count: count)
            return
        }
        let (sx, sy) = geometry.chroma.subsamplingShift
        let chromaWidth = geometry.chromaWidthPx, chromaHeight = geometry.chromaHeightPx
        let cbSrc = frame.cb.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let crSrc = frame.cr.baseAddress!.assumingMemoryBound(to: UInt8.self)
        for j in 0..<heightPx {
            let cy = min(chromaHeight - 1, (j * f + f / 2) >> sy)
            for i in 0..<widthPx {
                let cx = min(chromaWidth - 1, (i * f + f / 2) >> sx)
                cb[j * widthPx + i] = Float(cbSrc[cy * chromaWidth + cx]) - 128
                cr[j * widthPx + i] = Float(crSrc[cy * chromaWidth + cx]) - 128
            }
        }
    }
}
