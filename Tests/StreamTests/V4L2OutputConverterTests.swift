import ColorcamCore
import Foundation
import Testing

@testable import Stream

/// Every V4L2 output format colorcam writes, checked against ffmpeg's conversion of the same frame
/// (`-sws_flags bilinear`, the filter the converter implements): luma exact, chroma within 1 level, for 4:2:0,
/// 4:2:2, 4:4:4 and mono frames with random (worst-case) chroma. ffmpeg is required (Debian's `ffmpeg`).
@Suite struct V4L2OutputConverterTests {
    /// How the reference image of each format is made: ffmpeg resamples the frame's chroma to `planar` with its
    /// bilinear filter (the arithmetic under test), then ffmpeg repacks that losslessly into `layout`; the formats
    /// ffmpeg has no writer for are repacked here (YV12, VYUY, NV61: yuv420p, uyvy422, NV16 with Cb and Cr
    /// exchanged; NV16: yuv422p interleaved).
    static let references: [V4L2PixelFormat: (planar: String, layout: String?, swapped: Bool)] = [
        .yuv420: ("yuv420p", nil, false), .yvu420: ("yuv420p", nil, true), .nv12: ("yuv420p", "nv12", false),
        .nv21: ("yuv420p", "nv21", false), .yuyv: ("yuv422p", "yuyv422", false), .uyvy: ("yuv422p", "uyvy422", false),
        .yvyu: ("yuv422p", "yvyu422", false), .vyuy: ("yuv422p", "uyvy422", true), .yuv422p: ("yuv422p", nil, false),
        .nv16: ("yuv422p", nil, false), .nv61: ("yuv422p", nil, true)
    ]

    static func randomFrame(_ geometry: FrameGeometry, seed: UInt64) -> FrameBuffer {
        let frame = FrameBuffer(geometry: geometry)
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        for i in 0..<geometry.frameBytes {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            frame.pixels[i] = UInt8(16 + state % 220)
        }
        return frame
    }

    static func y4m(_ frame: FrameBuffer) -> Data {
        let g = frame.geometry
        var data = Data("YUV4MPEG2 W\(g.widthPx) H\(g.heightPx) F30:1 Ip A1:1 C\(g.chroma.y4mTag)\nFRAME\n".utf8)
        data.append(contentsOf: UnsafeRawBufferPointer(frame.pixels))
        return data
    }

    /// Runs ffmpeg with `arguments` between `-y` and the output file; returns the output's bytes.
    static func ffmpeg(_ arguments: [String], in dir: URL) throws -> [UInt8] {
        let output = dir.appendingPathComponent("out-\(UUID().uuidString).raw")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y"] + arguments + [output.path]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "ffmpeg \(arguments.joined(separator: " ")) failed")
        return [UInt8](try Data(contentsOf: output))
    }

    /// The reference image of `frame` in `format` (see `references`).
    static func reference(_ frame: FrameBuffer, _ format: V4L2PixelFormat) throws -> [UInt8] {
        let (planar, layout, swapped) = try #require(references[format])
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("v4l2out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.y4m")
        try y4m(frame).write(to: input)
        let w = frame.geometry.widthPx, h = frame.geometry.heightPx
        var image = try ffmpeg(
            ["-i", input.path, "-sws_flags", "bilinear", "-f", "rawvideo", "-pix_fmt", planar], in: dir)
        if let layout {
            let samples = dir.appendingPathComponent("samples.raw")
            try Data(image).write(to: samples)
            image = try ffmpeg(
                [
                    "-f", "rawvideo", "-pix_fmt", planar, "-s", "\(w)x\(h)", "-i", samples.path,
                    "-f", "rawvideo", "-pix_fmt", layout
                ], in: dir)
        } else if format == .nv16 || format == .nv61 {
            let plane = (w + 1) / 2 * h
            var interleaved = Array(image[0..<(w * h)])
            for i in 0..<plane { interleaved += [image[w * h + i], image[w * h + plane + i]] }
            image = interleaved
        }
        return swapped ? swapChroma(image, format, widthPx: w, heightPx: h) : image
    }

    /// Exchanges the two chroma components of an image, so it reads as the swapped V4L2 format.
    static func swapChroma(_ image: [UInt8], _ format: V4L2PixelFormat, widthPx w: Int, heightPx h: Int) -> [UInt8] {
        var out = image
        switch format {
        case .yvu420:
            let plane = (w + 1) / 2 * ((h + 1) / 2)
            for i in 0..<plane { out.swapAt(w * h + i, w * h + plane + i) }
        case .vyuy:
            for i in stride(from: 0, to: out.count, by: 4) { out.swapAt(i, i + 2) }
        case .nv61:
            for i in stride(from: w * h, to: out.count, by: 2) { out.swapAt(i, i + 1) }
        default:
            break
        }
        return out
    }

    static let chromaFormats: [ChromaFormat] = [.yuv420(.jpeg), .yuv420(.mpeg2), .yuv422, .yuv444]

    @Test(arguments: V4L2OutputConverter.offeredFormats)
    func matchesFFmpegWithinOneLevel(format: V4L2PixelFormat) throws {
        for chroma in Self.chromaFormats {
            let geometry = FrameGeometry(widthPx: 48, heightPx: 34, chroma: chroma)
            let frame = Self.randomFrame(geometry, seed: UInt64(format.rawValue) ^ UInt64(geometry.frameBytes))
            let converter = try V4L2OutputConverter(
                format: format, geometry: geometry,
                bytesPerLine: V4L2Converter.minimumBytesPerLine(format, widthPx: geometry.widthPx), device: "test")
            var ours = [UInt8](repeating: 0, count: converter.imageBytes)
            ours.withUnsafeMutableBytes { converter.convert(frame, into: $0) }
            let reference = try Self.reference(frame, format)
            try #require(
                reference.count == ours.count,
                "\(format) from \(chroma): ffmpeg gave \(reference.count) bytes, colorcam \(ours.count)")
            let worst = zip(ours, reference).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(worst <= 1, "\(format) from \(chroma): differs from ffmpeg by up to \(worst) levels")
            // Luma is a copy whatever the format: the Y samples equal the frame's.
            let lumaExact = (0..<(48 * 34)).allSatisfy { i in
                ours[Self.lumaOffset(format, index: i, widthPx: 48)] == frame.pixels[i]
            }
            #expect(lumaExact, "\(format) from \(chroma): luma not copied exactly")
        }
    }

    /// Where luma sample `index` (row-major) lies in an image of `format` with minimal strides.
    static func lumaOffset(_ format: V4L2PixelFormat, index: Int, widthPx: Int) -> Int {
        switch format {
        case .yuyv, .yvyu: return index * 2
        case .uyvy, .vyuy: return index * 2 + 1
        default: return index
        }
    }

    @Test(arguments: V4L2OutputConverter.offeredFormats)
    func monoFramesGetTheirLumaAndNeutralChroma(format: V4L2PixelFormat) throws {
        // ffmpeg reads a mono Y4M as full-range grey and rescales it, so mono is checked against the definition:
        // the same Y samples, Cb = Cr = 128.
        let geometry = FrameGeometry(widthPx: 10, heightPx: 6, chroma: .mono)
        let frame = Self.randomFrame(geometry, seed: 3)
        let converter = try V4L2OutputConverter(
            format: format, geometry: geometry,
            bytesPerLine: V4L2Converter.minimumBytesPerLine(format, widthPx: 10), device: "test")
        var image = [UInt8](repeating: 0, count: converter.imageBytes)
        image.withUnsafeMutableBytes { converter.convert(frame, into: $0) }
        var chroma = 0
        for (offset, byte) in image.enumerated() {
            if let lumaIndex = (0..<60).first(where: { Self.lumaOffset(format, index: $0, widthPx: 10) == offset }) {
                #expect(byte == frame.pixels[lumaIndex], "\(format): luma \(lumaIndex)")
            } else {
                #expect(byte == 128, "\(format): chroma byte \(offset) is \(byte)")
                chroma += 1
            }
        }
        #expect(chroma == image.count - 60)
    }

    @Test func paddedRowsAndOddSizesStayInsideTheImage() throws {
        // 33x21 4:2:0 into YUYV with 8 bytes of padding per row: every row's samples land at the driver's stride,
        // the padding is untouched, and the last odd column repeats its luma (YUYV carries pixel pairs).
        let geometry = FrameGeometry(widthPx: 33, heightPx: 21, chroma: .yuv420(.jpeg))
        let frame = Self.randomFrame(geometry, seed: 7)
        let bpl = 17 * 4 + 8
        let converter = try V4L2OutputConverter(format: .yuyv, geometry: geometry, bytesPerLine: bpl, device: "test")
        #expect(converter.imageBytes == bpl * 20 + 17 * 4)
        var image = [UInt8](repeating: 0xEE, count: bpl * 21)
        image.withUnsafeMutableBytes { converter.convert(frame, into: $0) }
        for row in 0..<21 {
            for x in 0..<33 { #expect(image[row * bpl + 2 * x] == frame.pixels[row * 33 + x]) }
            #expect(image[row * bpl + 2 * 33] == frame.pixels[row * 33 + 32], "odd column's pair partner")
            if row < 20 { #expect(image[(row * bpl + 68)..<((row + 1) * bpl)].allSatisfy { $0 == 0xEE }) }
        }
    }

    @Test func refusesAFormatItDoesNotWriteAndATooNarrowStride() {
        let geometry = FrameGeometry(widthPx: 16, heightPx: 8, chroma: .yuv420(.jpeg))
        #expect(throws: StreamError.self) {
            _ = try V4L2OutputConverter(format: .rgb24, geometry: geometry, bytesPerLine: 48, device: "/dev/video9")
        }
        do {
            _ = try V4L2OutputConverter(format: .yuyv, geometry: geometry, bytesPerLine: 31, device: "/dev/video9")
            Issue.record("a 31-byte stride for 16 px of YUYV was accepted")
        } catch let error as StreamError {
            #expect(error.description.hasPrefix("/dev/video9: "))
            #expect(error.description.contains("bytesperline 31 < 32"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}
