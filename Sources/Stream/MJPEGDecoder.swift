import CTurboJPEG
import ColorcamCore

/// Decodes Motion-JPEG camera frames (one baseline JPEG per buffer) with libjpeg-turbo's TurboJPEG API straight to
/// planar YCbCr, into a 4:2:2 `FrameBuffer` (the usual UVC subsampling).
///
/// JPEGs that are 4:2:2 decode directly into the frame; 4:2:0 (chroma rows repeated), 4:4:4 (horizontal chroma
/// pairs averaged, rounding up) and greyscale (chroma 128) go through scratch planes allocated once in `init`.
/// Other subsamplings (4:4:0, 4:1:1) and corrupt data are reported by returning false.
///
/// Threading: one thread at a time (owns a TurboJPEG handle). Allocates nothing per frame.
public final class MJPEGDecoder {
    public let geometry: FrameGeometry
    private let handle: tjhandle
    /// Scratch planes for JPEGs whose subsampling is not 4:2:2: Y, Cb, Cr at up to full size.
    private let scratch: UnsafeMutablePointer<UInt8>

    /// - Parameter geometry: the output frame; must be 4:2:2.
    /// - Throws: `StreamError` `.internalError` if TurboJPEG cannot make a decompressor.
    public init(geometry: FrameGeometry) throws {
        precondition(geometry.chroma == .yuv422, "MJPEGDecoder writes 4:2:2 frames")
        guard let handle = tjInitDecompress() else {
            throw StreamError(.internalError, file: "libturbojpeg", "tjInitDecompress failed")
        }
        self.geometry = geometry
        self.handle = handle
        scratch = .allocate(capacity: geometry.lumaBytes * 3)
    }

    deinit {
        tjDestroy(handle)
        scratch.deallocate()
    }

    /// Decodes `jpeg` into `frame` (pixels only).
    /// - Returns: false when the data is not a JPEG of the frame's size with a supported subsampling, or is corrupt
    ///   (`lastError` says why).
    public func decode(_ jpeg: UnsafeRawBufferPointer, into frame: FrameBuffer) -> Bool {
        precondition(frame.geometry == geometry, "frame geometry differs from the decoder's")
        guard let base = jpeg.baseAddress?.assumingMemoryBound(to: UInt8.self), jpeg.count > 4 else {
            lastError = "empty buffer"
            return false
        }
        var width: Int32 = 0, height: Int32 = 0, subsamp: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, base, UInt(jpeg.count), &width, &height, &subsamp, &colorspace) == 0 else {
            lastError = "bad JPEG header: \(String(cString: tjGetErrorStr2(handle)))"
            return false
        }
        guard Int(width) == geometry.widthPx, Int(height) == geometry.heightPx else {
            lastError = "JPEG is \(width)x\(height), expected \(geometry.widthPx)x\(geometry.heightPx)"
            return false
        }
        let w = geometry.widthPx, h = geometry.heightPx, cw = geometry.chromaWidthPx
        let y = frame.luma.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let cb = frame.cb.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let cr = frame.cr.baseAddress!.assumingMemoryBound(to: UInt8.self)
        switch Int(subsamp) {
        case Int(TJSAMP_422.rawValue):
            return decodePlanes(base, jpeg.count, y, cb, cr, strides: (w, cw, cw))
        case Int(TJSAMP_420.rawValue):
            let sb = scratch, sr = scratch + w * h
            guard decodePlanes(base, jpeg.count, y, sb, sr, strides: (w, cw, cw)) else { return false }
            for row in 0..<h {
                (cb + row * cw).update(from: sb + (row / 2) * cw, count: cw)
                (cr + row * cw).update(from: sr + (row / 2) * cw, count: cw)
            }
            return true
        case Int(TJSAMP_444.rawValue):
            let sb = scratch, sr = scratch + w * h
            guard decodePlanes(base, jpeg.count, y, sb, sr, strides: (w, w, w)) else { return false }
            for row in 0..<h {
                let b = sb + row * w, r = sr + row * w, db = cb + row * cw, dr = cr + row * cw
                for i in 0..<cw {
                    let j = min(2 * i + 1, w - 1)
                    db[i] = UInt8((Int(b[2 * i]) + Int(b[j]) + 1) >> 1)
                    dr[i] = UInt8((Int(r[2 * i]) + Int(r[j]) + 1) >> 1)
                }
            }
            return true
        case Int(TJSAMP_GRAY.rawValue):
            guard decodePlanes(base, jpeg.count, y, nil, nil, strides: (w, 0, 0)) else { return false }
            frame.cb.initializeMemory(as: UInt8.self, repeating: 128)
            frame.cr.initializeMemory(as: UInt8.self, repeating: 128)
            return true
        default:
            lastError = "unsupported JPEG subsampling (TJSAMP \(subsamp))"
            return false
        }
    }

    /// Why the last `decode` returned false.
    public private(set) var lastError = ""

    private func decodePlanes(
        _ base: UnsafePointer<UInt8>, _ count: Int, _ y: UnsafeMutablePointer<UInt8>,
        _ cb: UnsafeMutablePointer<UInt8>?, _ cr: UnsafeMutablePointer<UInt8>?,
        strides: (Int, Int, Int)
    ) -> Bool {
        var planes: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?) =
            (y, cb, cr)
        var strideValues: (Int32, Int32, Int32) = (Int32(strides.0), Int32(strides.1), Int32(strides.2))
        let status = withUnsafeMutablePointer(to: &planes) { planesPtr in
            withUnsafeMutablePointer(to: &strideValues) { stridesPtr in
                planesPtr.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 3) { p in
                    stridesPtr.withMemoryRebound(to: Int32.self, capacity: 3) { s in
                        tjDecompressToYUVPlanes(
                            handle, base, UInt(count), p, Int32(geometry.widthPx), s,
                            Int32(geometry.heightPx), 0)
                    }
                }
            }
        }
        if status != 0 {
            // Warnings (e.g. a few corrupt bytes at the end) still produce a full image.
            if tjGetErrorCode(handle) == TJERR_WARNING.rawValue { return true }
            lastError = "JPEG decode failed: \(String(cString: tjGetErrorStr2(handle)))"
            return false
        }
        return true
    }
}
