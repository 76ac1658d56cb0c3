import ColorcamCore

/// Converts colorcam's planar frames (Y, Cb, Cr planes, stride = width; any `ChromaFormat`) into one image of a
/// V4L2 *output* format, for a video output device such as a v4l2loopback virtual camera.
///
/// Luma is copied byte for byte. Chroma is resampled to the format's subsampling with ffmpeg's bilinear filters
/// (`-sws_flags bilinear`, which the tests use as the oracle, within 1 level): halving is the [1 3 3 1]/8 kernel
/// over the two samples a target sample covers and their outer neighbours (edges clamped), doubling vertically
/// (4:2:0 → 4:2:2) is [3 1]/4 from the nearer and the farther source row. A frame with the format's own
/// subsampling is copied. Mono frames get neutral chroma (128).
///
/// Layouts and row strides follow the V4L2 definitions `V4L2Converter` uses for capture (`bytesPerLine` is the
/// driver's luma stride; chroma strides derive from it).
///
/// Ownership and threading: one converter per output geometry and format; it owns scratch planes allocated in
/// `init`, so `convert` allocates nothing, and it must be used from one thread at a time.
public final class V4L2OutputConverter {
    /// Output formats colorcam can write, in the order it prefers them when a device offers several: formats that
    /// need no chroma resampling for the usual 4:2:0 frames first, then packed 4:2:2 (what most consumers read).
    public static let offeredFormats: [V4L2PixelFormat] = [
        .yuv420, .nv12, .yvu420, .nv21, .yuyv, .uyvy, .yvyu, .vyuy, .yuv422p, .nv16, .nv61
    ]

    public let format: V4L2PixelFormat
    public let geometry: FrameGeometry
    /// The driver's luma row stride in bytes.
    public let bytesPerLine: Int
    /// Bytes one converted image fills (`bytesused` of an output buffer).
    public let imageBytes: Int
    /// Target chroma plane size.
    private let chromaWidthPx: Int
    private let chromaHeightPx: Int
    /// Scratch: Cb and Cr at the target subsampling, and one plane at the source height (horizontal pass).
    private let cbPlane: UnsafeMutableBufferPointer<UInt8>
    private let crPlane: UnsafeMutableBufferPointer<UInt8>
    private let rowsPass: UnsafeMutableBufferPointer<UInt8>

    /// - Parameter device: the device path error messages name.
    /// - Throws: `StreamError` `.unavailable` when `format` is not one colorcam writes, or `bytesPerLine` is too
    ///   small for `geometry`'s width.
    public init(format: V4L2PixelFormat, geometry: FrameGeometry, bytesPerLine: Int, device: String) throws {
        guard Self.offeredFormats.contains(format) else {
            let list = Self.offeredFormats.map(\.fourCC).joined(separator: " ")
            throw StreamError(
                .unavailable, file: device, "output format \(format) is not one colorcam writes (\(list))")
        }
        let minimum = V4L2Converter.minimumBytesPerLine(format, widthPx: geometry.widthPx)
        guard bytesPerLine >= minimum else {
            throw StreamError(
                .unavailable, file: device,
                "VIDIOC_S_FMT: bytesperline \(bytesPerLine) < \(minimum) for \(format) \(geometry.widthPx) px")
        }
        self.format = format
        self.geometry = geometry
        self.bytesPerLine = bytesPerLine
        imageBytes = V4L2Converter.minimumImageBytes(
            format, bytesPerLine: bytesPerLine, widthPx: geometry.widthPx,
            heightPx: geometry.heightPx)
        chromaWidthPx = (geometry.widthPx + 1) / 2
        chromaHeightPx = Self.isHalfHeight(format) ? (geometry.heightPx + 1) / 2 : geometry.heightPx
        let sourceChromaHeight = max(geometry.chromaHeightPx, 1)
        cbPlane = .allocate(capacity: chromaWidthPx * chromaHeightPx)
        crPlane = .allocate(capacity: chromaWidthPx * chromaHeightPx)
        rowsPass = .allocate(capacity: chromaWidthPx * sourceChromaHeight)
        cbPlane.initialize(repeating: 128)
        crPlane.initialize(repeating: 128)
        rowsPass.initialize(repeating: 128)
    }

    deinit {
        cbPlane.deallocate()
        crPlane.deallocate()
        rowsPass.deallocate()
    }

    /// 4:2:0 formats (chroma halved vertically too).
    static func isHalfHeight(_ format: V4L2PixelFormat) -> Bool {
        format == .yuv420 || format == .yvu420 || format == .nv12 || format == .nv21
    }

    /// Writes `frame` as one image into `destination` (at least `imageBytes` long). Allocates nothing.
    public func convert(_ frame: FrameBuffer, into destination: UnsafeMutableRawBufferPointer) {
        precondition(
            frame.geometry == geometry, "frame geometry \(frame.geometry) does not fit the converter's \(geometry)")
        precondition(destination.count >= imageBytes, "output buffer of \(destination.count) bytes < \(imageBytes)")
        resampleChroma(frame)
        let dst = destination.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let luma = UnsafeRawPointer(frame.luma.baseAddress!).assumingMemoryBound(to: UInt8.self)
        let w = geometry.widthPx, h = geometry.heightPx
        let cw = chromaWidthPx, ch = chromaHeightPx
        let cb = UnsafePointer(cbPlane.baseAddress!), cr = UnsafePointer(crPlane.baseAddress!)
        switch format {
        case .yuyv, .yvyu, .uyvy, .vyuy:
            // Byte offsets of Y0, U, Y1, V inside each 4-byte group.
            let (y0, u, y1, v): (Int, Int, Int, Int) =
                format == .yuyv
                ? (0, 1, 2, 3)
                : format == .yvyu
                    ? (0, 3, 2, 1)
                    : format == .uyvy ? (1, 0, 3, 2) : (1, 2, 3, 0)
            for row in 0..<h {
                let out = dst + row * bytesPerLine, yRow = luma + row * w
                let cbRow = cb + row * cw, crRow = cr + row * cw
                for pair in 0..<cw {
                    let x = 2 * pair
                    out[4 * pair + y0] = yRow[x]
                    out[4 * pair + y1] = x + 1 < w ? yRow[x + 1] : yRow[x]
                    out[4 * pair + u] = cbRow[pair]
                    out[4 * pair + v] = crRow[pair]
                }
            }
        case .yuv420, .yvu420, .yuv422p:
            copyLuma(luma, to: dst)
            let chromaLine = V4L2Converter.chromaBytesPerLine(format, bytesPerLine: bytesPerLine, widthPx: w)
            let first = dst + bytesPerLine * h, second = first + chromaLine * ch
            let (planeU, planeV) = format == .yvu420 ? (second, first) : (first, second)
            for row in 0..<ch {
                (planeU + row * chromaLine).update(from: cb + row * cw, count: cw)
                (planeV + row * chromaLine).update(from: cr + row * cw, count: cw)
            }
        case .nv12, .nv21, .nv16, .nv61:
            copyLuma(luma, to: dst)
            let chromaLine = V4L2Converter.chromaBytesPerLine(format, bytesPerLine: bytesPerLine, widthPx: w)
            let plane = dst + bytesPerLine * h
            let (u, v) = format == .nv12 || format == .nv16 ? (0, 1) : (1, 0)
            for row in 0..<ch {
                let out = plane + row * chromaLine, cbRow = cb + row * cw, crRow = cr + row * cw
                for x in 0..<cw {
                    out[2 * x + u] = cbRow[x]
                    out[2 * x + v] = crRow[x]
                }
            }
        default:
            preconditionFailure("format \(format) passed init but has no writer")
        }
    }

    private func copyLuma(_ luma: UnsafePointer<UInt8>, to dst: UnsafeMutablePointer<UInt8>) {
        let w = geometry.widthPx
        for row in 0..<geometry.heightPx { (dst + row * bytesPerLine).update(from: luma + row * w, count: w) }
    }

    /// Fills `cbPlane`/`crPlane` (target subsampling) from the frame's chroma planes.
    private func resampleChroma(_ frame: FrameBuffer) {
        guard geometry.chroma.hasChroma else { return }  // neutral chroma, set once in init
        resample(UnsafeRawPointer(frame.cb.baseAddress!).assumingMemoryBound(to: UInt8.self), into: cbPlane)
        resample(UnsafeRawPointer(frame.cr.baseAddress!).assumingMemoryBound(to: UInt8.self), into: crPlane)
    }

    private func resample(_ source: UnsafePointer<UInt8>, into target: UnsafeMutableBufferPointer<UInt8>) {
        let sw = geometry.chromaWidthPx, sh = geometry.chromaHeightPx
        let tw = chromaWidthPx, th = chromaHeightPx
        // Horizontal pass: source width → target width (same, or halved from 4:4:4), into rowsPass (tw × sh).
        let rows = rowsPass.baseAddress!
        if sw == tw {
            rows.update(from: source, count: tw * sh)
        } else {
            for y in 0..<sh {
                let s = source + y * sw, out = rows + y * tw
                for x in 0..<tw {
                    let c = 2 * x
                    let inner: Int = 3 * (Int(s[c]) + Int(s[min(c + 1, sw - 1)]))
                    let outer: Int = Int(s[max(c - 1, 0)]) + Int(s[min(c + 2, sw - 1)])
                    out[x] = UInt8((inner + outer + 4) >> 3)
                }
            }
        }
        let out = target.baseAddress!
        if sh == th {
            out.update(from: rows, count: tw * th)
        } else if th < sh {
            // Halve vertically: 4:2:2 / 4:4:4 → 4:2:0.
            for y in 0..<th {
                let r = 2 * y
                let a = rows + max(r - 1, 0) * tw, b = rows + r * tw
                let c = rows + min(r + 1, sh - 1) * tw, d = rows + min(r + 2, sh - 1) * tw
                let o = out + y * tw
                for x in 0..<tw {
                    let inner: Int = 3 * (Int(b[x]) + Int(c[x]))
                    let outer: Int = Int(a[x]) + Int(d[x])
                    o[x] = UInt8((inner + outer + 4) >> 3)
                }
            }
        } else {
            // Double vertically: 4:2:0 → 4:2:2. Target row y lies between source rows; the nearer weighs 3/4.
            for y in 0..<th {
                let near = min(y / 2, sh - 1)
                let far = y % 2 == 0 ? max(near - 1, 0) : min(near + 1, sh - 1)
                let n = rows + near * tw, f = rows + far * tw, o = out + y * tw
                for x in 0..<tw { o[x] = UInt8((3 * Int(n[x]) + Int(f[x]) + 2) >> 2) }
            }
        }
    }
}
