import ColorcamCore
import Testing

@testable import Stream

/// Conversions from V4L2 layouts to colorcam's planar frames, on odd sizes and padded rows, against naive
/// per-pixel references written from the V4L2 format definitions.
@Suite struct V4L2ConverterTests {
    /// A deterministic byte pattern (not periodic in 2 or 4, so swapped offsets show).
    static func pattern(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 73 &+ seed &* 31 &+ ($0 >> 3)) % 251) }
    }

    func convert(
        _ format: V4L2PixelFormat, _ source: [UInt8], bytesPerLine: Int, widthPx: Int,
        heightPx: Int
    ) -> FrameBuffer? {
        let frame = FrameBuffer(
            geometry: FrameGeometry(
                widthPx: widthPx, heightPx: heightPx,
                chroma: format.planarChroma!))
        let ok = source.withUnsafeBytes {
            V4L2Converter.convert(format, source: $0, bytesPerLine: bytesPerLine, into: frame)
        }
        return ok ? frame : nil
    }

    // (format, luma offset in the 4-byte group, Cb offset, Cr offset)
    static let packedFormats: [(V4L2PixelFormat, Int, Int, Int)] = [
        (.yuyv, 0, 1, 3), (.yvyu, 0, 3, 1), (.uyvy, 1, 0, 2), (.vyuy, 1, 2, 0)
    ]

    @Test(arguments: [1, 2, 3, 4, 5, 7, 8, 9, 13, 31, 32, 33, 35, 37, 63, 64, 65, 97, 101, 640], [1, 2, 3])
    func packed422MatchesTheByteReference(widthPx: Int, heightPx: Int) {
        for (format, yo, cbo, cro) in Self.packedFormats {
            for padding in [0, 4, 6] {
                let bpl = (widthPx + 1) / 2 * 4 + padding
                let src = Self.pattern(bpl * heightPx, seed: widthPx + padding)
                guard let frame = convert(format, src, bytesPerLine: bpl, widthPx: widthPx, heightPx: heightPx) else {
                    Issue.record("\(format) \(widthPx)x\(heightPx) refused")
                    continue
                }
                // Reference straight from the format definition.
                let cw = (widthPx + 1) / 2
                var y = [UInt8](repeating: 0, count: widthPx * heightPx)
                var cb = [UInt8](repeating: 0, count: cw * heightPx), cr = cb
                for row in 0..<heightPx {
                    for x in 0..<widthPx {
                        let g = row * bpl + (x / 2) * 4
                        y[row * widthPx + x] = src[g + yo + 2 * (x % 2)]
                        cb[row * cw + x / 2] = src[g + cbo]
                        cr[row * cw + x / 2] = src[g + cro]
                    }
                }
                #expect(Array(frame.luma) == y, "\(format) \(widthPx)x\(heightPx) pad \(padding) luma")
                #expect(Array(frame.cb) == cb, "\(format) \(widthPx)x\(heightPx) pad \(padding) Cb")
                #expect(Array(frame.cr) == cr, "\(format) \(widthPx)x\(heightPx) pad \(padding) Cr")
            }
        }
    }

    @Test(arguments: [(2, 2), (6, 4), (10, 6), (64, 2)])
    func semiPlanarAndPlanar420(widthPx: Int, heightPx: Int) {
        let padding = 8
        let bpl = widthPx + padding
        let cw = widthPx / 2, ch = heightPx / 2
        let lumaRef = Self.pattern(widthPx * heightPx, seed: 1)
        let cbRef = Self.pattern(cw * ch, seed: 2), crRef = Self.pattern(cw * ch, seed: 3)
        var lumaRows: [UInt8] = []
        for row in 0..<heightPx {
            lumaRows += lumaRef[(row * widthPx)..<((row + 1) * widthPx)] + Array(repeating: 0xEE, count: padding)
        }
        // NV12 / NV21: one interleaved chroma plane, same stride as luma.
        for (format, first, second) in [(V4L2PixelFormat.nv12, cbRef, crRef), (.nv21, crRef, cbRef)] {
            var chroma: [UInt8] = []
            for row in 0..<ch {
                for i in 0..<cw { chroma += [first[row * cw + i], second[row * cw + i]] }
                chroma += Array(repeating: 0xDD, count: bpl - 2 * cw)
            }
            let frame = convert(format, lumaRows + chroma, bytesPerLine: bpl, widthPx: widthPx, heightPx: heightPx)
            #expect(frame.map { Array($0.luma) } == lumaRef, "\(format)")
            #expect(frame.map { Array($0.cb) } == cbRef, "\(format)")
            #expect(frame.map { Array($0.cr) } == crRef, "\(format)")
        }
        // YU12 / YV12: two chroma planes with stride bpl/2.
        for (format, first, second) in [(V4L2PixelFormat.yuv420, cbRef, crRef), (.yvu420, crRef, cbRef)] {
            var planes: [UInt8] = []
            for plane in [first, second] {
                for row in 0..<ch {
                    planes += plane[(row * cw)..<((row + 1) * cw)] + Array(repeating: 0xCC, count: bpl / 2 - cw)
                }
            }
            let frame = convert(format, lumaRows + planes, bytesPerLine: bpl, widthPx: widthPx, heightPx: heightPx)
            #expect(frame.map { Array($0.cb) } == cbRef, "\(format)")
            #expect(frame.map { Array($0.cr) } == crRef, "\(format)")
        }
    }

    @Test func greyAndWideLuma() {
        let grey = convert(.grey, [1, 2, 3, 0xEE, 4, 5, 6, 0xEE], bytesPerLine: 4, widthPx: 3, heightPx: 2)
        #expect(grey.map { Array($0.luma) } == [1, 2, 3, 4, 5, 6])
        // Little-endian words: Y16 keeps the high byte, Y10 drops 2 bits, Y12 drops 4.
        let words: [UInt8] = [0x34, 0x12, 0xFF, 0xFF, 0x00, 0x80]
        #expect(
            convert(.y16, words, bytesPerLine: 6, widthPx: 3, heightPx: 1).map { Array($0.luma) } == [0x12, 0xFF, 0x80])
        let y10: [UInt8] = [0xFF, 0x03, 0x00, 0x02, 0x04, 0x00]
        #expect(convert(.y10, y10, bytesPerLine: 6, widthPx: 3, heightPx: 1).map { Array($0.luma) } == [255, 128, 1])
    }

    @Test(arguments: [
        (V4L2PixelFormat.rgb24, [255, 255, 255, 0, 0, 0, 255, 0, 0] as [UInt8], 3),
        (.bgr24, [255, 255, 255, 0, 0, 0, 0, 0, 255], 3),
        (.xbgr32, [255, 255, 255, 9, 0, 0, 0, 9, 0, 0, 255, 9], 4),
        (.rgbx32, [255, 255, 255, 9, 0, 0, 0, 9, 255, 0, 0, 9], 4),
        (.xrgb32, [9, 255, 255, 255, 9, 0, 0, 0, 9, 255, 0, 0], 4),
        (.bgrx32, [9, 255, 255, 255, 9, 0, 0, 0, 9, 0, 0, 255], 4)
    ])
    func rgbBecomesLimitedRangeBT601(format: V4L2PixelFormat, pixels: [UInt8], bytesPerPixel: Int) {
        // white, black, red
        let frame = convert(format, pixels, bytesPerLine: 3 * bytesPerPixel, widthPx: 3, heightPx: 1)
        #expect(frame.map { Array($0.luma) } == [235, 16, 82])
        #expect(frame.map { Array($0.cb) } == [128, 128, 90])
        #expect(frame.map { Array($0.cr) } == [128, 128, 240])
    }

    @Test func aShortBufferIsRefusedNotOverread() {
        let bpl = 16
        #expect(
            convert(.yuyv, [UInt8](repeating: 0, count: bpl * 3 - 1), bytesPerLine: bpl, widthPx: 8, heightPx: 3) == nil
        )
        #expect(
            convert(.yuyv, [UInt8](repeating: 0, count: bpl * 3), bytesPerLine: bpl, widthPx: 8, heightPx: 3) != nil)
        #expect(
            convert(.nv12, [UInt8](repeating: 0, count: 8 * 4 + 8 * 2 - 1), bytesPerLine: 8, widthPx: 8, heightPx: 4)
                == nil)
    }
}
