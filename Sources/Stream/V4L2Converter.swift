import ColorcamCore

/// Converts one uncompressed V4L2 image into colorcam's planar frame (`FrameBuffer`: Y, Cb, Cr planes, stride =
/// width), with the chroma layout `V4L2PixelFormat.planarChroma` names.
///
/// YCbCr formats are re-arranged byte for byte (no arithmetic: packed 4:2:2 → planar 4:2:2, NV12 → planar 4:2:0,
/// Y16 → its high byte); RGB formats go to 4:4:4 with BT.601 limited-range integer coefficients.
/// Row strides come from the driver's `bytesperline`. Allocates nothing; safe on any thread for distinct frames.
public enum V4L2Converter {
    /// The smallest `bytesperline` that holds one row of `format` at `widthPx`.
    public static func minimumBytesPerLine(_ format: V4L2PixelFormat, widthPx: Int) -> Int {
        switch format {
        case .yuyv, .yvyu, .uyvy, .vyuy: return (widthPx + 1) / 2 * 4
        case .y10, .y12, .y16: return widthPx * 2
        case .rgb24, .bgr24: return widthPx * 3
        case .xbgr32, .abgr32, .bgrx32, .bgra32, .rgbx32, .rgba32, .xrgb32, .argb32: return widthPx * 4
        default: return widthPx
        }
    }

    /// Chroma row stride of the planar/semi-planar formats, derived from the luma `bytesPerLine` as V4L2 defines it.
    static func chromaBytesPerLine(_ format: V4L2PixelFormat, bytesPerLine: Int, widthPx: Int) -> Int {
        switch format {
        case .yuv420, .yvu420, .yuv422p: return max(bytesPerLine / 2, (widthPx + 1) / 2)
        case .nv12, .nv21, .nv16, .nv61: return max(bytesPerLine, (widthPx + 1) / 2 * 2)
        case .nv24, .nv42: return max(bytesPerLine * 2, widthPx * 2)
        default: return 0
        }
    }

    /// Bytes a whole image of `format` needs with the given luma stride (for compressed formats: 0).
    public static func minimumImageBytes(
        _ format: V4L2PixelFormat, bytesPerLine: Int, widthPx: Int,
        heightPx: Int
    ) -> Int {
        let chromaLine = chromaBytesPerLine(format, bytesPerLine: bytesPerLine, widthPx: widthPx)
        let halfRows = (heightPx + 1) / 2
        switch format {
        case .mjpeg, .jpeg: return 0
        case .yuv420, .yvu420: return bytesPerLine * heightPx + 2 * chromaLine * halfRows
        case .nv12, .nv21: return bytesPerLine * heightPx + chromaLine * halfRows
        case .yuv422p: return bytesPerLine * heightPx + 2 * chromaLine * heightPx
        case .nv16, .nv61, .nv24, .nv42: return bytesPerLine * heightPx + chromaLine * heightPx
        default: return bytesPerLine * (heightPx - 1) + minimumBytesPerLine(format, widthPx: widthPx)
        }
    }

    /// Converts `source` (one image as the driver wrote it) into `frame`.
    ///
    /// - Parameters:
    ///   - bytesPerLine: the driver's luma row stride in bytes.
    ///   - frame: geometry must be `widthPx × heightPx` with `format.planarChroma`.
    /// - Returns: false if `source` is shorter than the image needs (a truncated buffer; nothing is read past it).
    public static func convert(
        _ format: V4L2PixelFormat, source: UnsafeRawBufferPointer, bytesPerLine: Int,
        into frame: FrameBuffer
    ) -> Bool {
        let g = frame.geometry
        precondition(format.planarChroma == g.chroma && !format.isCompressed, "frame geometry does not fit \(format)")
        let w = g.widthPx, h = g.heightPx
        let chromaLine = chromaBytesPerLine(format, bytesPerLine: bytesPerLine, widthPx: w)
        let needed = minimumImageBytes(format, bytesPerLine: bytesPerLine, widthPx: w, heightPx: h)
        guard source.count >= needed, let src = source.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            return false
        }
        let y = frame.luma.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let cb = frame.cb.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let cr = frame.cr.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let cw = g.chromaWidthPx, ch = g.chromaHeightPx
        switch format {
        case .yuyv: packed422(src, bytesPerLine, w, h, y, cb!, cr!, yOffset: 0, cbOffset: 1, crOffset: 3)
        case .yvyu: packed422(src, bytesPerLine, w, h, y, cb!, cr!, yOffset: 0, cbOffset: 3, crOffset: 1)
        case .uyvy: packed422(src, bytesPerLine, w, h, y, cb!, cr!, yOffset: 1, cbOffset: 0, crOffset: 2)
        case .vyuy: packed422(src, bytesPerLine, w, h, y, cb!, cr!, yOffset: 1, cbOffset: 2, crOffset: 0)
        case .grey:
            copyPlane(src, bytesPerLine, y, w, h)
        case .yuv420, .yuv422p:
            copyPlane(src, bytesPerLine, y, w, h)
            copyPlane(src + bytesPerLine * h, chromaLine, cb!, cw, ch)
            copyPlane(src + bytesPerLine * h + chromaLine * ch, chromaLine, cr!, cw, ch)
        case .yvu420:
            copyPlane(src, bytesPerLine, y, w, h)
            copyPlane(src + bytesPerLine * h, chromaLine, cr!, cw, ch)
            copyPlane(src + bytesPerLine * h + chromaLine * ch, chromaLine, cb!, cw, ch)
        case .nv12, .nv16, .nv24:
            copyPlane(src, bytesPerLine, y, w, h)
            splitPairs(src + bytesPerLine * h, chromaLine, cb!, cr!, cw, ch)
        case .nv21, .nv61, .nv42:
            copyPlane(src, bytesPerLine, y, w, h)
            splitPairs(src + bytesPerLine * h, chromaLine, cr!, cb!, cw, ch)
        case .y10: wideLuma(src, bytesPerLine, y, w, h, shift: 2)
        case .y12: wideLuma(src, bytesPerLine, y, w, h, shift: 4)
        case .y16: wideLuma(src, bytesPerLine, y, w, h, shift: 8)
        case .rgb24: rgb(src, bytesPerLine, 3, (0, 1, 2), w, h, y, cb!, cr!)
        case .bgr24: rgb(src, bytesPerLine, 3, (2, 1, 0), w, h, y, cb!, cr!)
        case .xbgr32, .abgr32: rgb(src, bytesPerLine, 4, (2, 1, 0), w, h, y, cb!, cr!)
        case .bgrx32, .bgra32: rgb(src, bytesPerLine, 4, (3, 2, 1), w, h, y, cb!, cr!)
        case .rgbx32, .rgba32: rgb(src, bytesPerLine, 4, (0, 1, 2), w, h, y, cb!, cr!)
        case .xrgb32, .argb32: rgb(src, bytesPerLine, 4, (1, 2, 3), w, h, y, cb!, cr!)
        default: preconditionFailure("no converter for \(format)")
        }
        return true
    }

    private static func copyPlane(
        _ src: UnsafePointer<UInt8>, _ srcStride: Int, _ dst: UnsafeMutablePointer<UInt8>,
        _ w: Int, _ h: Int
    ) {
        if srcStride == w {
            dst.update(from: src, count: w * h)
            return
        }
        for row in 0..<h { (dst + row * w).update(from: src + row * srcStride, count: w) }
    }

    /// Packed 4:2:2 (two pixels in four bytes) → planar. Offsets are positions inside each 4-byte group
    /// (luma at `yOffset` and `yOffset + 2`, which is 0 or 1).
    ///
    /// 32 pixels (64 bytes) at a time with 128-bit vectors, in the plain SSE2 form: read as 16-bit lanes, luma is the
    /// low or high byte of each lane and chroma the other (mask or shift, then narrow with a saturating pack that
    /// cannot saturate), and the chroma bytes split into Cb and Cr the same way. Per 32 pixels that is 4 loads,
    /// 12 mask/shift, 6 pack and 4 stores — no shuffles — which is also what QEMU's TCG emulation (the CI VM)
    /// runs fastest: 0.5–0.7 ms for 640x360 there against 3.1 ms for the former 64-bit scalar form (16 µs to
    /// 0.27 ms natively). The rest of a row goes 4 pixels at a time with 64-bit words, then by pairs.
    /// `packed422Reference` is the byte-at-a-time version the unit tests compare it with.
    static func packed422(
        _ src: UnsafePointer<UInt8>, _ stride: Int, _ w: Int, _ h: Int,
        _ y: UnsafeMutablePointer<UInt8>, _ cb: UnsafeMutablePointer<UInt8>,
        _ cr: UnsafeMutablePointer<UInt8>, yOffset: Int, cbOffset: Int, crOffset: Int
    ) {
        // Constant arguments, so each layout gets its own loop with immediate shifts.
        switch (yOffset, cbOffset < crOffset) {
        case (0, true): packed422Rows(src, stride, w, h, y, cb, cr, lumaHigh: false, cbHigh: false)
        case (0, false): packed422Rows(src, stride, w, h, y, cb, cr, lumaHigh: false, cbHigh: true)
        case (_, true): packed422Rows(src, stride, w, h, y, cb, cr, lumaHigh: true, cbHigh: false)
        default: packed422Rows(src, stride, w, h, y, cb, cr, lumaHigh: true, cbHigh: true)
        }
    }

    /// `packed422` for one layout: luma in the high byte of each 16-bit lane (`lumaHigh`: UYVY, VYUY) or the low
    /// one; Cb the second chroma byte of a pair (`cbHigh`: YVYU, VYUY) or the first.
    @inline(__always)
    private static func packed422Rows(
        _ src: UnsafePointer<UInt8>, _ stride: Int, _ w: Int, _ h: Int,
        _ y: UnsafeMutablePointer<UInt8>, _ cb: UnsafeMutablePointer<UInt8>,
        _ cr: UnsafeMutablePointer<UInt8>, lumaHigh: Bool, cbHigh: Bool
    ) {
        let cw = (w + 1) / 2
        let blocks = w / 32
        for row in 0..<h {
            let s = UnsafeRawPointer(src + row * stride)
            let yRow = UnsafeMutableRawPointer(y + row * w)
            let cbRow = UnsafeMutableRawPointer(cb + row * cw), crRow = UnsafeMutableRawPointer(cr + row * cw)
            for b in 0..<blocks {
                let v0 = s.loadUnaligned(fromByteOffset: b &* 64, as: SIMD16<UInt16>.self)
                let v1 = s.loadUnaligned(fromByteOffset: b &* 64 &+ 32, as: SIMD16<UInt16>.self)
                let y0 = SIMD16<UInt8>(truncatingIfNeeded: lumaHigh ? v0 &>> 8 : v0)
                let y1 = SIMD16<UInt8>(truncatingIfNeeded: lumaHigh ? v1 &>> 8 : v1)
                let c0 = SIMD16<UInt8>(truncatingIfNeeded: lumaHigh ? v0 : v0 &>> 8)
                let c1 = SIMD16<UInt8>(truncatingIfNeeded: lumaHigh ? v1 : v1 &>> 8)
                // 16 chroma pairs (first, second) as 16-bit lanes.
                let pairs = unsafeBitCast(SIMD32<UInt8>(lowHalf: c0, highHalf: c1), to: SIMD16<UInt16>.self)
                let cbs = SIMD16<UInt8>(truncatingIfNeeded: cbHigh ? pairs &>> 8 : pairs)
                let crs = SIMD16<UInt8>(truncatingIfNeeded: cbHigh ? pairs : pairs &>> 8)
                yRow.storeBytes(of: y0, toByteOffset: b &* 32, as: SIMD16<UInt8>.self)
                yRow.storeBytes(of: y1, toByteOffset: b &* 32 &+ 16, as: SIMD16<UInt8>.self)
                cbRow.storeBytes(of: cbs, toByteOffset: b &* 16, as: SIMD16<UInt8>.self)
                crRow.storeBytes(of: crs, toByteOffset: b &* 16, as: SIMD16<UInt8>.self)
            }
            packed422Tail(s, from: blocks * 32, w, yRow, cbRow, crRow, lumaHigh: lumaHigh, cbHigh: cbHigh)
        }
    }

    /// The pixels of a row from `firstPx` (even) on: 4 at a time in 64-bit words, then a pair, then an odd last
    /// pixel (whose chroma is its group's).
    @inline(__always)
    private static func packed422Tail(
        _ s: UnsafeRawPointer, from firstPx: Int, _ w: Int,
        _ yRow: UnsafeMutableRawPointer, _ cbRow: UnsafeMutableRawPointer,
        _ crRow: UnsafeMutableRawPointer, lumaHigh: Bool, cbHigh: Bool
    ) {
        let lumaShift: UInt64 = lumaHigh ? 8 : 0, chromaShift: UInt64 = lumaHigh ? 0 : 8
        let cbShift: UInt32 = cbHigh ? 8 : 0, crShift: UInt32 = cbHigh ? 0 : 8
        let evenBytes: UInt64 = 0x00FF_00FF_00FF_00FF
        var x = firstPx
        while x + 4 <= w {
            let v = s.loadUnaligned(fromByteOffset: x * 2, as: UInt64.self)
            // Gather the four even bytes of a 64-bit word into its low 32 bits.
            var l = (v >> lumaShift) & evenBytes
            l = (l | (l >> 8)) & 0x0000_FFFF_0000_FFFF
            l = (l | (l >> 16)) & 0xFFFF_FFFF
            var c = (v >> chromaShift) & evenBytes
            c = (c | (c >> 8)) & 0x0000_FFFF_0000_FFFF
            let c32 = UInt32(truncatingIfNeeded: c | (c >> 16))  // chroma bytes in order: c0 c1 c2 c3
            let cb16 = UInt16(truncatingIfNeeded: (c32 >> cbShift) & 0xFF | ((c32 >> (cbShift + 16)) & 0xFF) << 8)
            let cr16 = UInt16(truncatingIfNeeded: (c32 >> crShift) & 0xFF | ((c32 >> (crShift + 16)) & 0xFF) << 8)
            yRow.storeBytes(of: UInt32(truncatingIfNeeded: l), toByteOffset: x, as: UInt32.self)
            cbRow.storeBytes(of: cb16, toByteOffset: x / 2, as: UInt16.self)
            crRow.storeBytes(of: cr16, toByteOffset: x / 2, as: UInt16.self)
            x += 4
        }
        let yo = lumaHigh ? 1 : 0, co = 1 - yo
        let cbo = co + (cbHigh ? 2 : 0), cro = co + (cbHigh ? 0 : 2)
        let bytes = s.assumingMemoryBound(to: UInt8.self)
        let yBytes = yRow.assumingMemoryBound(to: UInt8.self)
        let cbBytes = cbRow.assumingMemoryBound(to: UInt8.self), crBytes = crRow.assumingMemoryBound(to: UInt8.self)
        while x < w {
            let p = bytes + x * 2
            yBytes[x] = p[yo]
            if x + 1 < w { yBytes[x + 1] = p[yo + 2] }
            cbBytes[x / 2] = p[cbo]
            crBytes[x / 2] = p[cro]
            x += 2
        }
    }

    /// Byte-at-a-time packed 4:2:2 → planar: the reference `packed422` is tested against.
    static func packed422Reference(
        _ src: UnsafePointer<UInt8>, _ stride: Int, _ w: Int, _ h: Int,
        _ y: UnsafeMutablePointer<UInt8>, _ cb: UnsafeMutablePointer<UInt8>,
        _ cr: UnsafeMutablePointer<UInt8>, yOffset: Int, cbOffset: Int, crOffset: Int
    ) {
        let cw = (w + 1) / 2
        for row in 0..<h {
            let s = src + row * stride
            for x in 0..<w {
                let group = s + (x / 2) * 4
                y[row * w + x] = group[yOffset + 2 * (x & 1)]
                if x & 1 == 0 {
                    cb[row * cw + x / 2] = group[cbOffset]
                    cr[row * cw + x / 2] = group[crOffset]
                }
            }
        }
    }

    /// An interleaved two-byte chroma plane → two planes (`first` gets byte 0 of each pair).
    private static func splitPairs(
        _ src: UnsafePointer<UInt8>, _ stride: Int, _ first: UnsafeMutablePointer<UInt8>,
        _ second: UnsafeMutablePointer<UInt8>, _ cw: Int, _ ch: Int
    ) {
        for row in 0..<ch {
            let s = src + row * stride
            let a = first + row * cw, b = second + row * cw
            for i in 0..<cw {
                a[i] = s[2 * i]
                b[i] = s[2 * i + 1]
            }
        }
    }

    /// 16-bit little-endian luma words → 8 bits (`value >> shift`, i.e. the top 8 significant bits).
    private static func wideLuma(
        _ src: UnsafePointer<UInt8>, _ stride: Int, _ dst: UnsafeMutablePointer<UInt8>,
        _ w: Int, _ h: Int, shift: Int
    ) {
        for row in 0..<h {
            let s = src + row * stride
            let d = dst + row * w
            for i in 0..<w {
                let value = Int(s[2 * i]) | Int(s[2 * i + 1]) << 8
                d[i] = UInt8(truncatingIfNeeded: min(value >> shift, 255))
            }
        }
    }

    /// RGB → 4:4:4 YCbCr, BT.601 limited range: the integer form with 8-bit coefficients, rounded.
    private static func rgb(
        _ src: UnsafePointer<UInt8>, _ stride: Int, _ bytesPerPixel: Int, _ order: (Int, Int, Int),
        _ w: Int, _ h: Int, _ y: UnsafeMutablePointer<UInt8>, _ cb: UnsafeMutablePointer<UInt8>,
        _ cr: UnsafeMutablePointer<UInt8>
    ) {
        for row in 0..<h {
            let s = src + row * stride
            let base = row * w
            for i in 0..<w {
                let p = s + i * bytesPerPixel
                let r = Int32(p[order.0]), g = Int32(p[order.1]), b = Int32(p[order.2])
                y[base + i] = UInt8(((66 * r + 129 * g + 25 * b + 128) >> 8) + 16)
                cb[base + i] = UInt8(((-38 * r - 74 * g + 112 * b + 128) >> 8) + 128)
                cr[base + i] = UInt8(((112 * r - 94 * g - 18 * b + 128) >> 8) + 128)
            }
        }
    }
}
