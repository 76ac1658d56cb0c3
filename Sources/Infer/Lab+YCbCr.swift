/// Camera YCbCr → sRGB → Lab, for BT.601 and BT.709 matrices in full or limited ("video") range.
///
/// The camera's Y'CbCr carries gamma-encoded R'G'B' (what sRGB's codes are), so decoding is the matrix inverse
/// then the usual sRGB → Lab. Limited range maps Y 16…235 and Cb/Cr 16…240 (centre 128) to full scale; decoded
/// R'G'B' is clipped to 0…1 (limited-range footroom/headroom would otherwise produce out-of-gamut colours).
/// Pure functions: any thread, no allocation.
public struct YCbCrEncoding: Sendable, Equatable {
    /// Luma weights of red and blue (green is 1 − kr − kb).
    public var kr: Float
    public var kb: Float
    /// True: Y 0…255, Cb/Cr 0…255 (JPEG, most webcams' MJPEG). False: Y 16…235, Cb/Cr 16…240.
    public var fullRange: Bool

    public static let bt601Full = YCbCrEncoding(kr: 0.299, kb: 0.114, fullRange: true)
    public static let bt601Limited = YCbCrEncoding(kr: 0.299, kb: 0.114, fullRange: false)
    public static let bt709Full = YCbCrEncoding(kr: 0.2126, kb: 0.0722, fullRange: true)
    public static let bt709Limited = YCbCrEncoding(kr: 0.2126, kb: 0.0722, fullRange: false)

    public init(kr: Float, kb: Float, fullRange: Bool) {
        self.kr = kr
        self.kb = kb
        self.fullRange = fullRange
    }

    /// One sample triple (8-bit codes) → R'G'B' in 0…1 (clipped).
    @inline(__always)
    public func rgb(y: UInt8, cb: UInt8, cr: UInt8) -> (Float, Float, Float) {
        let yy: Float, u: Float, v: Float
        if fullRange {
            yy = Float(y) / 255
            u = (Float(cb) - 128) / 255
            v = (Float(cr) - 128) / 255
        } else {
            yy = (Float(y) - 16) / 219
            u = (Float(cb) - 128) / 224
            v = (Float(cr) - 128) / 224
        }
        let kg = 1 - kr - kb
        let r = yy + 2 * (1 - kr) * v
        let b = yy + 2 * (1 - kb) * u
        let g = (yy - kr * r - kb * b) / kg
        return (min(max(r, 0), 1), min(max(g, 0), 1), min(max(b, 0), 1))
    }
}

extension Lab {
    /// Converts planar 4:2:0 YCbCr (luma `widthPx × heightPx`, chroma `⌈w/2⌉ × ⌈h/2⌉`, rows packed) to
    /// interleaved Lab (`widthPx × heightPx × 3` floats); each chroma sample covers its 2×2 luma block.
    /// `scratchRGB` must hold 3 × `widthPx` floats (one row of R'G'B').
    public static func convertYCbCr420ToLab(
        luma: UnsafePointer<UInt8>, cb: UnsafePointer<UInt8>,
        cr: UnsafePointer<UInt8>, widthPx: Int, heightPx: Int,
        encoding: YCbCrEncoding, lab: UnsafeMutablePointer<Float>,
        scratchRGB: UnsafeMutablePointer<Float>
    ) {
        let chromaWidth = (widthPx + 1) / 2
        for row in 0..<heightPx {
            let c = (row / 2) * chromaWidth
            for x in 0..<widthPx {
                let (r, g, b) = encoding.rgb(y: luma[row * widthPx + x], cb: cb[c + x / 2], cr: cr[c + x / 2])
                scratchRGB[3 * x] = r; scratchRGB[3 * x + 1] = g; scratchRGB[3 * x + 2] = b
            }
            convertRGBToLab(scratchRGB, lab + 3 * row * widthPx, pixelCount: widthPx)
        }
    }

    /// L only from planar 4:2:0 YCbCr (the model's input from a camera frame). `scratch` holds 6 × `widthPx`
    /// floats.
    public static func lightnessFromYCbCr420(
        luma: UnsafePointer<UInt8>, cb: UnsafePointer<UInt8>,
        cr: UnsafePointer<UInt8>, widthPx: Int, heightPx: Int,
        encoding: YCbCrEncoding, lightness: UnsafeMutablePointer<Float>,
        scratch: UnsafeMutablePointer<Float>
    ) {
        let rowLab = scratch + 3 * widthPx
        for row in 0..<heightPx {
            convertYCbCr420ToLab(
                luma: luma + row * widthPx, cb: cb + (row / 2) * ((widthPx + 1) / 2),
                cr: cr + (row / 2) * ((widthPx + 1) / 2), widthPx: widthPx, heightPx: 1,
                encoding: encoding, lab: rowLab, scratchRGB: scratch)
            for x in 0..<widthPx { lightness[row * widthPx + x] = rowLab[3 * x] }
        }
    }
}
