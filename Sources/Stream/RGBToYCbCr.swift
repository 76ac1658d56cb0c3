import ColorcamCore

/// Converts packed 8-bit sRGB (R G B per pixel) to BT.601 full-range ("JPEG") YCbCr 4:2:0.
///
///     Y  =       0.299    R + 0.587    G + 0.114    B
///     Cb = 128 − 0.168736 R − 0.331264 G + 0.5      B
///     Cr = 128 + 0.5      R − 0.418688 G − 0.081312 B
///
/// The values are the gamma-encoded sRGB codes, as JPEG does. Chroma is computed from the average R, G, B of
/// each 2×2 block (of the pixels that exist, for odd sizes: 2 or 1). Fixed point with 16 fractional bits,
/// rounded to nearest; results are within 1 of the exact formula. Allocates nothing.
enum RGBToYCbCr {
    // Coefficients × 65536; each row sums to 65536 (Y) or 0 (Cb, Cr), so greys map to Cb = Cr = 128 exactly.
    private static let yR = 19595, yG = 38470, yB = 7471
    private static let cbR = -11059, cbG = -21709, cbB = 32768
    private static let crR = 32768, crG = -27439, crB = -5329

    /// Converts `rgb` (`widthPx × heightPx × 3` bytes, rows packed) into `frame`, which must be 4:2:0 of the
    /// same size.
    static func convert(rgb: UnsafeRawBufferPointer, widthPx: Int, heightPx: Int, into frame: FrameBuffer) {
        let geometry = frame.geometry
        precondition(
            geometry.widthPx == widthPx && geometry.heightPx == heightPx
                && geometry.chroma.subsamplingShift == (1, 1) && rgb.count >= widthPx * heightPx * 3,
            "RGB and frame sizes disagree")
        let source = rgb.bindMemory(to: UInt8.self).baseAddress!
        let luma = frame.luma.bindMemory(to: UInt8.self).baseAddress!
        let cb = frame.cb.bindMemory(to: UInt8.self).baseAddress!
        let cr = frame.cr.bindMemory(to: UInt8.self).baseAddress!
        let rowBytes = widthPx * 3
        for y in 0..<heightPx {
            let row = source + y * rowBytes
            let out = luma + y * widthPx
            for x in 0..<widthPx {
                let r = Int(row[3 * x]), g = Int(row[3 * x + 1]), b = Int(row[3 * x + 2])
                out[x] = UInt8(truncatingIfNeeded: (yR * r + yG * g + yB * b + 32768) >> 16)
            }
        }
        let chromaWidth = geometry.chromaWidthPx
        for cy in 0..<geometry.chromaHeightPx {
            let rows = min(2, heightPx - 2 * cy)
            for cx in 0..<chromaWidth {
                let columns = min(2, widthPx - 2 * cx)
                var sumR = 0, sumG = 0, sumB = 0
                for dy in 0..<rows {
                    let pixel = source + (2 * cy + dy) * rowBytes + 6 * cx
                    for dx in 0..<columns {
                        sumR += Int(pixel[3 * dx])
                        sumG += Int(pixel[3 * dx + 1])
                        sumB += Int(pixel[3 * dx + 2])
                    }
                }
                let count = rows * columns
                cb[cy * chromaWidth + cx] = chroma(cbR * sumR + cbG * sumG + cbB * sumB, count: count)
                cr[cy * chromaWidth + cx] = chroma(crR * sumR + crG * sumG + crB * sumB, count: count)
            }
        }
    }

    /// `128 + weighted / (count × 65536)`, rounded to nearest and clamped to 0...255.
    @inline(__always)
    private static func chroma(_ weighted: Int, count: Int) -> UInt8 {
        let scale = count << 16
        let value = (weighted + 128 * scale + scale / 2) / scale  // numerator ≥ 0: Cb, Cr lie in [0.5, 255.5]
        return UInt8(clamping: value)
    }
}
