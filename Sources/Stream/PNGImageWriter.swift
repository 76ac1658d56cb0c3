import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// Writes one frame as an 8-bit RGB PNG (BT.601 full-range YCbCr → RGB, chroma nearest-sampled) with libpng's
/// `PNGEncoder`. For diagnostics (`colorcam detect --draw`), not the real-time path: it allocates an RGB buffer
/// per call. Threading: any thread; the frame must not change during the call.
public enum PNGImageWriter {
    /// - Throws: `StreamError(.ioError)` naming `path` when libpng cannot write it.
    public static func write(_ frame: FrameBuffer, to path: String) throws {
        let g = frame.geometry
        var rgb = [UInt8](repeating: 0, count: g.widthPx * g.heightPx * 3)
        let luma = frame.luma.bindMemory(to: UInt8.self)
        let cb = frame.cb.bindMemory(to: UInt8.self), cr = frame.cr.bindMemory(to: UInt8.self)
        let (sx, sy) = g.chroma.subsamplingShift
        for y in 0..<g.heightPx {
            for x in 0..<g.widthPx {
                let l = Double(luma[y * g.widthPx + x])
                var u = 0.0, v = 0.0
                if g.chroma.hasChroma {
                    let c = (y >> sy) * g.chromaWidthPx + (x >> sx)
                    u = Double(cb[c]) - 128
                    v = Double(cr[c]) - 128
                }
                let o = (y * g.widthPx + x) * 3
                rgb[o] = clampByte(l + 1.402 * v)
                rgb[o + 1] = clampByte(l - 0.344136 * u - 0.714136 * v)
                rgb[o + 2] = clampByte(l + 1.772 * u)
            }
        }
        do {
            try rgb.withUnsafeBytes { try PNGEncoder.writeRGB($0, widthPx: g.widthPx, heightPx: g.heightPx, to: path) }
        } catch {
            throw StreamError(.ioError, file: path, "cannot write the PNG: \(error)")
        }
    }

    @inline(__always) private static func clampByte(_ value: Double) -> UInt8 {
        UInt8(max(0, min(255, value.rounded())))
    }
}
