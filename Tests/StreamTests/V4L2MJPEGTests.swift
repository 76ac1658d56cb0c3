import CTurboJPEG
import ColorcamCore
import Foundation
import Testing

@testable import Stream

/// A test prerequisite that is not installed: thrown, so the test FAILS saying what to install.
struct MissingTool: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// MJPEG decoding (libturbojpeg) on frames ffmpeg encodes, since vivid has no MJPEG: compared with ffmpeg's own
/// decode of the same file. The two decoders' IDCTs differ slightly, hence the tolerance.
@Suite struct V4L2MJPEGTests {
    static let widthPx = 96, heightPx = 64
    /// Largest difference allowed between libjpeg-turbo's and ffmpeg's decode of one sample.
    static let toleranceLevels = 3

    /// Runs ffmpeg; a missing ffmpeg fails the test with what to install.
    static func ffmpeg(_ args: [String]) throws {
        let candidates = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"]
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw MissingTool(message: "ffmpeg not found: install it (apt-get install ffmpeg) to run the MJPEG tests")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = ["-v", "error", "-y"] + args
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "ffmpeg \(args.joined(separator: " ")) failed")
    }

    /// Encodes one testsrc2 frame as a JPEG with `pixFmt` (yuvj422p, yuvj420p, yuvj444p, gray) and returns the JPEG
    /// and ffmpeg's decode of it in the JPEG's own layout (planes back to back).
    static func jpegAndReference(_ pixFmt: String) throws -> (jpeg: [UInt8], planes: [UInt8]) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("colorcam-mjpeg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let jpg = dir.appendingPathComponent("f.jpg").path, raw = dir.appendingPathComponent("f.yuv").path
        try ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=\(widthPx)x\(heightPx):rate=1", "-frames:v", "1",
            "-pix_fmt", pixFmt, "-q:v", "3", "-f", "mjpeg", jpg
        ])
        try ffmpeg(["-i", jpg, "-f", "rawvideo", "-pix_fmt", pixFmt, raw])
        return (
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: jpg))),
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        )
    }

    static func maxDiff(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Int {
        zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    func decode(_ jpeg: [UInt8]) throws -> FrameBuffer? {
        let g = FrameGeometry(widthPx: Self.widthPx, heightPx: Self.heightPx, chroma: .yuv422)
        let decoder = try MJPEGDecoder(geometry: g)
        let frame = FrameBuffer(geometry: g)
        let ok = jpeg.withUnsafeBytes { decoder.decode($0, into: frame) }
        return ok ? frame : nil
    }

    @Test func jpeg422DecodesDirectly() throws {
        let (jpeg, ref) = try Self.jpegAndReference("yuvj422p")
        let frame = try #require(try decode(jpeg))
        let w = Self.widthPx, h = Self.heightPx, c = w / 2 * h
        #expect(ref.count == w * h + 2 * c)
        #expect(Self.maxDiff(frame.luma, ref[0..<(w * h)]) <= Self.toleranceLevels)
        #expect(Self.maxDiff(frame.cb, ref[(w * h)..<(w * h + c)]) <= Self.toleranceLevels)
        #expect(Self.maxDiff(frame.cr, ref[(w * h + c)...]) <= Self.toleranceLevels)
    }

    @Test func jpeg420RepeatsChromaRows() throws {
        let (jpeg, ref) = try Self.jpegAndReference("yuvj420p")
        let frame = try #require(try decode(jpeg))
        let w = Self.widthPx, h = Self.heightPx, cw = w / 2, c = cw * h / 2
        #expect(Self.maxDiff(frame.luma, ref[0..<(w * h)]) <= Self.toleranceLevels)
        var cbUp: [UInt8] = [], crUp: [UInt8] = []
        for row in 0..<h {
            let cbStart: Int = w * h + (row / 2) * cw
            let crStart: Int = cbStart + c
            cbUp += ref[cbStart..<(cbStart + cw)]
            crUp += ref[crStart..<(crStart + cw)]
        }
        #expect(Self.maxDiff(frame.cb, cbUp) <= Self.toleranceLevels)
        #expect(Self.maxDiff(frame.cr, crUp) <= Self.toleranceLevels)
    }

    @Test func jpeg444AveragesChromaPairs() throws {
        let (jpeg, ref) = try Self.jpegAndReference("yuvj444p")
        let frame = try #require(try decode(jpeg))
        let w = Self.widthPx, h = Self.heightPx
        let cb = ref[(w * h)..<(2 * w * h)].map { Int($0) }, cr = ref[(2 * w * h)...].map { Int($0) }
        var cbHalf: [UInt8] = [], crHalf: [UInt8] = []
        for row in 0..<h {
            for i in 0..<(w / 2) {
                let j = row * w + 2 * i
                cbHalf.append(UInt8((cb[j] + cb[j + 1] + 1) / 2))
                crHalf.append(UInt8((cr[j] + cr[j + 1] + 1) / 2))
            }
        }
        #expect(Self.maxDiff(frame.luma, ref[0..<(w * h)]) <= Self.toleranceLevels)
        #expect(Self.maxDiff(frame.cb, cbHalf) <= Self.toleranceLevels)
        #expect(Self.maxDiff(frame.cr, crHalf) <= Self.toleranceLevels)
    }

    /// ffmpeg's MJPEG encoder has no greyscale mode (it writes 4:4:4), so this one JPEG comes from libturbojpeg.
    @Test func greyscaleJpegGetsNeutralChroma() throws {
        let w = Self.widthPx, h = Self.heightPx
        let ramp = (0..<(w * h)).map { UInt8(($0 % w) * 255 / (w - 1)) }
        let handle = try #require(tjInitCompress())
        defer { tjDestroy(handle) }
        var jpegBuffer: UnsafeMutablePointer<UInt8>?
        var jpegSize: UInt = 0
        let status = ramp.withUnsafeBufferPointer {
            tjCompress2(
                handle, $0.baseAddress, Int32(w), Int32(w), Int32(h), Int32(TJPF_GRAY.rawValue), &jpegBuffer,
                &jpegSize, Int32(TJSAMP_GRAY.rawValue), 95, 0)
        }
        #expect(status == 0)
        let jpeg = Array(UnsafeBufferPointer(start: try #require(jpegBuffer), count: Int(jpegSize)))
        tjFree(jpegBuffer)
        let frame = try #require(try decode(jpeg))
        #expect(Self.maxDiff(frame.luma, ramp) <= Self.toleranceLevels)
        #expect(frame.cb.allSatisfy { $0 == 128 } && frame.cr.allSatisfy { $0 == 128 })
    }

    @Test func garbageAndWrongSizesAreRefused() throws {
        let (jpeg, _) = try Self.jpegAndReference("yuvj422p")
        #expect(try decode(Array(repeating: 0x55, count: 1000)) == nil)
        #expect(try decode([]) == nil)
        let g = FrameGeometry(widthPx: 32, heightPx: 32, chroma: .yuv422)
        let decoder = try MJPEGDecoder(geometry: g)
        let ok = jpeg.withUnsafeBytes { decoder.decode($0, into: FrameBuffer(geometry: g)) }
        #expect(!ok)
        #expect(decoder.lastError == "JPEG is 96x64, expected 32x32")
    }

    @Test func anMJPEGCameraDeliversDecodedFramesAndCountsBadOnes() throws {
        let (jpeg, _) = try Self.jpegAndReference("yuvj422p")
        let dev = ScriptedV4L2 {
            $0.formats = [.mjpeg]
            $0.sizes = [(Self.widthPx, Self.heightPx)]
            $0.frames = [
                ScriptedFrame(sequence: 0, timestampNs: 1_000_000, bytes: jpeg),
                ScriptedFrame(sequence: 1, timestampNs: 2_000_000, bytes: Array(repeating: 0x55, count: 500)),
                ScriptedFrame(sequence: 2, timestampNs: 3_000_000, bytes: jpeg)
            ]
        }
        let source = try V4L2Source(
            path: "/dev/video9",
            request: V4L2CaptureRequest(widthPx: Self.widthPx, heightPx: Self.heightPx, framesPerSecond: 30),
            clock: ManualClock(), syscalls: dev.syscalls, warn: { _ in })
        #expect(source.configuration.pixelFormat == .mjpeg)
        #expect(source.geometry.chroma == .yuv422)
        let frame = FrameBuffer(geometry: source.geometry)
        #expect(try source.readFrame(into: frame))
        #expect(frame.sequence == 0 && source.lastFrameInfo.decodeErrorCount == 0)
        let direct = try #require(try decode(jpeg))
        #expect(Array(frame.pixels) == Array(direct.pixels))
        #expect(try source.readFrame(into: frame))
        #expect(frame.sequence == 2 && source.lastFrameInfo.decodeErrorCount == 1)
    }
}
