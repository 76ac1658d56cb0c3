import ColorcamCore
import Foundation
import Testing

@testable import Stream

/// Writes packed RGB (or RGBA) pixels as a PNG with ffmpeg (lossless: rgb24 / rgba in, same format out).
private func writePNG(
    _ path: String, widthPx: Int, heightPx: Int, pixels: [UInt8], alpha: Bool = false,
    in dir: TemporaryDirectory
) async throws {
    let raw = try dir.write(".raw-\(UUID().uuidString)", pixels)
    defer { unlink(raw) }
    try await ffmpeg([
        "-f", "rawvideo", "-pix_fmt", alpha ? "rgba" : "rgb24", "-s", "\(widthPx)x\(heightPx)", "-i", raw,
        "-frames:v", "1", "-pix_fmt", alpha ? "rgba" : "rgb24", "-f", "image2", path
    ])
}

private func solid(_ r: UInt8, _ g: UInt8, _ b: UInt8, count: Int) -> [UInt8] {
    (0..<count).flatMap { _ in [r, g, b] }
}

/// The exact BT.601 full-range formulas, in Double.
private func referenceYCbCr(_ r: Double, _ g: Double, _ b: Double) -> (y: Double, cb: Double, cr: Double) {
    (
        0.299 * r + 0.587 * g + 0.114 * b,
        128 - 0.168736 * r - 0.331264 * g + 0.5 * b,
        128 + 0.5 * r - 0.418688 * g - 0.081312 * b
    )
}

extension ExternalToolTests {
    @Test func filesPlayInByteWiseNameOrderAndOthersAreIgnored() async throws {
        let dir = try TemporaryDirectory()
        let names = ["b.png", "a.png", "B.png", "10.png", "9.png", "c.PNG"]
        for (index, name) in names.enumerated() {
            // Each file is a solid grey whose level encodes its index in `names`.
            let level = UInt8(20 * index)
            try await writePNG(
                dir.file(name), widthPx: 4, heightPx: 2, pixels: solid(level, level, level, count: 8),
                in: dir)
        }
        try dir.write("notes.txt", Array("not a picture".utf8))
        try dir.write(".hidden.png", Array("not a picture either".utf8))
        try FileManager.default.createDirectory(atPath: dir.file("sub"), withIntermediateDirectories: false)

        let source = try PNGFolderSource(directory: dir.path)
        let order = ["10.png", "9.png", "B.png", "a.png", "b.png", "c.PNG"]  // byte-wise: digits < upper < lower
        #expect(source.files == order.map { dir.file($0) })
        #expect(source.geometry == FrameGeometry(widthPx: 4, heightPx: 2, chroma: .yuv420(.jpeg)))
        #expect(source.frameRate == (30, 1))
        #expect(source.nominalFrameIntervalNs == 33_333_333)
        #expect(source.canRewind)
        let frames = try readAllFrames(source)
        #expect(frames.map(\.sequence) == Array(0..<order.count))
        #expect(frames.allSatisfy { $0.timestampNs == nil })
        let lumaLevels = frames.map { $0.pixels[0] }
        #expect(lumaLevels == order.map { UInt8(20 * names.firstIndex(of: $0)!) })
        // Greys have neutral chroma exactly.
        #expect(frames.allSatisfy { $0.pixels[8...].allSatisfy { $0 == 128 } })

        try source.rewind()
        #expect(try readAllFrames(source).map { $0.pixels[0] } == lumaLevels)
    }

    @Test(arguments: [(5, 3), (1, 1), (2, 2), (7, 4)])
    func conversionMatchesBT601FullRangeWithChromaAveragedOverAvailablePixels(widthPx: Int, heightPx: Int)
        async throws
    {
        let dir = try TemporaryDirectory()
        let rgb = patternBytes(count: widthPx * heightPx * 3, seed: UInt64(widthPx * 31 + heightPx))
        try await writePNG(dir.file("frame.png"), widthPx: widthPx, heightPx: heightPx, pixels: rgb, in: dir)
        let source = try PNGFolderSource(directory: dir.path, fps: 12)
        #expect(source.frameRate == (12, 1))
        #expect(source.nominalFrameIntervalNs == 83_333_333)
        let buffer = FrameBuffer(geometry: source.geometry)
        #expect(try source.readFrame(into: buffer))
        #expect(try source.readFrame(into: buffer) == false)

        func pixel(_ x: Int, _ y: Int) -> (Double, Double, Double) {
            let i = 3 * (y * widthPx + x)
            return (Double(rgb[i]), Double(rgb[i + 1]), Double(rgb[i + 2]))
        }
        for y in 0..<heightPx {
            for x in 0..<widthPx {
                let (r, g, b) = pixel(x, y)
                let expected = referenceYCbCr(r, g, b).y
                let got = Double(buffer.luma[y * widthPx + x])
                #expect(abs(got - expected) <= 1, "Y at \(x),\(y): \(got) vs \(expected)")
            }
        }
        let chromaWidth = (widthPx + 1) / 2
        for cy in 0..<(heightPx + 1) / 2 {
            for cx in 0..<chromaWidth {
                var sum = (0.0, 0.0, 0.0)
                var count = 0.0
                for y in (2 * cy)..<min(2 * cy + 2, heightPx) {
                    for x in (2 * cx)..<min(2 * cx + 2, widthPx) {
                        let (r, g, b) = pixel(x, y)
                        sum = (sum.0 + r, sum.1 + g, sum.2 + b)
                        count += 1
                    }
                }
                let expected = referenceYCbCr(sum.0 / count, sum.1 / count, sum.2 / count)
                let cb = Double(buffer.cb[cy * chromaWidth + cx]), cr = Double(buffer.cr[cy * chromaWidth + cx])
                #expect(abs(cb - expected.cb) <= 1, "Cb at \(cx),\(cy): \(cb) vs \(expected.cb)")
                #expect(abs(cr - expected.cr) <= 1, "Cr at \(cx),\(cy): \(cr) vs \(expected.cr)")
            }
        }
    }

    @Test func primaryColoursLandInTheRightPlanes() async throws {
        let dir = try TemporaryDirectory()
        for (name, rgb) in [("1-red", (255, 0, 0)), ("2-blue", (0, 0, 255)), ("3-white", (255, 255, 255))] {
            try await writePNG(
                dir.file(name + ".png"), widthPx: 2, heightPx: 2,
                pixels: solid(UInt8(rgb.0), UInt8(rgb.1), UInt8(rgb.2), count: 4), in: dir)
        }
        let frames = try readAllFrames(PNGFolderSource(directory: dir.path))
        // Layout per frame: 4 Y, 1 Cb, 1 Cr. Full range: red (76, 85, 255), blue (29, 255, 107), white (255, 128, 128).
        #expect(
            frames.map(\.pixels) == [
                [76, 76, 76, 76, 85, 255], [29, 29, 29, 29, 255, 107],
                [255, 255, 255, 255, 128, 128]
            ])
    }

    @Test func transparentPixelsAreCompositedOntoBlack() async throws {
        let dir = try TemporaryDirectory()
        // Opaque white, fully transparent white, half-transparent white, opaque black.
        let rgba: [UInt8] = [255, 255, 255, 255, 255, 255, 255, 0, 255, 255, 255, 128, 0, 0, 0, 255]
        try await writePNG(dir.file("alpha.png"), widthPx: 4, heightPx: 1, pixels: rgba, alpha: true, in: dir)
        let frames = try readAllFrames(PNGFolderSource(directory: dir.path))
        let luma = try #require(frames.first).pixels[0..<4]
        #expect(luma[0] == 255)
        #expect(luma[1] == 0)
        #expect(luma[2] > 100 && luma[2] < 200, "half-transparent white over black is mid grey, got \(luma[2])")
        #expect(luma[3] == 0)
    }

    @Test func aFileOfAnotherSizeIsAnErrorNamingIt() async throws {
        let dir = try TemporaryDirectory()
        try await writePNG(dir.file("a.png"), widthPx: 4, heightPx: 2, pixels: solid(1, 2, 3, count: 8), in: dir)
        try await writePNG(dir.file("b.png"), widthPx: 2, heightPx: 4, pixels: solid(1, 2, 3, count: 8), in: dir)
        let source = try PNGFolderSource(directory: dir.path)
        let buffer = FrameBuffer(geometry: source.geometry)
        #expect(try source.readFrame(into: buffer))
        expectStreamError(.badData, containing: [dir.file("b.png") + ":", "frame 1", "2x4", "4x2", "a.png"]) {
            _ = try source.readFrame(into: buffer)
        }
    }

    @Test func aPNGThatDoesNotDecodeIsAnErrorNamingIt() async throws {
        let dir = try TemporaryDirectory()
        try await writePNG(dir.file("a.png"), widthPx: 4, heightPx: 2, pixels: solid(1, 2, 3, count: 8), in: dir)
        try dir.write("b.png", Array("this is not a PNG at all".utf8))
        // A real PNG cut short: header fine, pixel data missing.
        let good = try readBytes(dir.file("a.png"))
        try dir.write("c.png", Array(good.prefix(good.count - 20)))
        let source = try PNGFolderSource(directory: dir.path)
        let buffer = FrameBuffer(geometry: source.geometry)
        #expect(try source.readFrame(into: buffer))
        expectStreamError(.badData, containing: [dir.file("b.png") + ":", "frame 1", "PNG"]) {
            _ = try source.readFrame(into: buffer)
        }
        // The source stays on the failing file: reading again repeats the error instead of silently skipping it.
        expectStreamError(.badData, containing: [dir.file("b.png")]) { _ = try source.readFrame(into: buffer) }

        let truncatedOnly = try TemporaryDirectory()
        try truncatedOnly.write("a.png", good)
        try truncatedOnly.write("b.png", Array(good.prefix(good.count - 20)))
        let second = try PNGFolderSource(directory: truncatedOnly.path)
        #expect(try second.readFrame(into: buffer))
        expectStreamError(.badData, containing: [truncatedOnly.file("b.png") + ":", "frame 1", "does not decode"]) {
            _ = try second.readFrame(into: buffer)
        }
    }

    @Test func emptyFolderMissingFolderAndBadFirstFile() async throws {
        let dir = try TemporaryDirectory()
        try dir.write("readme.txt", Array("no pictures".utf8))
        expectStreamError(.badData, containing: [dir.path + ":", "no .png files"]) {
            _ = try PNGFolderSource(directory: dir.path)
        }
        let missing = dir.file("missing")
        expectStreamError(.missingInput, containing: [missing + ":", "No such file"]) {
            _ = try PNGFolderSource(directory: missing)
        }
        try dir.write("x.png", Array("garbage".utf8))
        expectStreamError(.badData, containing: [dir.file("x.png") + ":", "frame 0", "not a readable PNG"]) {
            _ = try PNGFolderSource(directory: dir.path)
        }
        expectStreamError(.usage, containing: ["fps"]) { _ = try PNGFolderSource(directory: dir.path, fps: 0) }
        expectStreamError(.usage, containing: ["fps"]) { _ = try PNGFolderSource(directory: dir.path, fps: .nan) }
    }

    @Test func fractionalRatesBecomeReducedFractions() async throws {
        #expect(PNGFolderSource.fraction(30) == (30, 1))
        #expect(PNGFolderSource.fraction(12.5) == (25, 2))
        #expect(PNGFolderSource.fraction(29.97) == (2997, 100))
        let dir = try TemporaryDirectory()
        try await writePNG(dir.file("a.png"), widthPx: 2, heightPx: 2, pixels: solid(9, 9, 9, count: 4), in: dir)
        let source = try PNGFolderSource(directory: dir.path, fps: 29.97)
        #expect(source.frameRate == (2997, 100))
        #expect(source.nominalFrameIntervalNs == 33_366_700)
    }
}
