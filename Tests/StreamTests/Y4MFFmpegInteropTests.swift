import ColorcamCore
import Foundation
import Testing

@testable import Stream

/// A clip ffmpeg generates: `testsrc` at a size, in a pixel format, with the Y4M tag ffmpeg should write.
struct FFmpegClip: CustomStringConvertible, Sendable {
    let pixelFormat: String
    let widthPx: Int
    let heightPx: Int
    /// Extra ffmpeg output options (chroma siting).
    let options: [String]
    /// The `C` tag colorcam should see.
    let expectedTag: String
    /// Replace ffmpeg's `C420jpeg` in the header with this tag (ffmpeg cannot write plain `C420`).
    let rewrittenTag: String?

    init(
        _ pixelFormat: String, _ widthPx: Int, _ heightPx: Int, tag: String, options: [String] = [],
        rewrittenTag: String? = nil
    ) {
        self.pixelFormat = pixelFormat
        self.widthPx = widthPx
        self.heightPx = heightPx
        self.options = options
        self.expectedTag = tag
        self.rewrittenTag = rewrittenTag
    }

    var description: String { "\(pixelFormat) \(widthPx)x\(heightPx) C\(expectedTag)" }
}

let ffmpegClips: [FFmpegClip] = [
    FFmpegClip("yuv420p", 321, 241, tag: "420jpeg"),
    FFmpegClip("yuv420p", 640, 480, tag: "420jpeg"),
    FFmpegClip("yuv420p", 3, 7, tag: "420jpeg"),
    FFmpegClip("yuv420p", 321, 241, tag: "420paldv", options: ["-chroma_sample_location", "topleft"]),
    FFmpegClip("yuv420p", 640, 480, tag: "420mpeg2", options: ["-chroma_sample_location", "left"]),
    FFmpegClip("yuv420p", 321, 241, tag: "420", rewrittenTag: "420"),
    FFmpegClip("yuv422p", 321, 241, tag: "422"),
    FFmpegClip("yuv422p", 640, 480, tag: "422"),
    FFmpegClip("yuv444p", 321, 241, tag: "444"),
    FFmpegClip("yuv444p", 640, 480, tag: "444"),
    FFmpegClip("gray", 321, 241, tag: "mono"),
    FFmpegClip("gray", 640, 480, tag: "mono")
]

/// Expected BT.601 limited-range values ffmpeg gives pure colours: (Y, Cb, Cr).
let solidColours: [(name: String, y: UInt8, cb: UInt8, cr: UInt8)] = [
    ("red", 81, 90, 240), ("blue", 41, 240, 110)
]

/// Generates `clip` (5 frames of `testsrc`) as a .y4m in `dir`.
private func generate(_ clip: FFmpegClip, in dir: TemporaryDirectory) async throws -> String {
    let path = dir.file("in.y4m")
    try await ffmpeg(
        [
            "-f", "lavfi", "-i", "testsrc=size=\(clip.widthPx)x\(clip.heightPx):rate=30", "-frames:v", "5",
            "-pix_fmt", clip.pixelFormat
        ] + clip.options + ["-f", "yuv4mpegpipe", path])
    if let tag = clip.rewrittenTag {
        var bytes = try readBytes(path)
        let newline = try #require(bytes.firstIndex(of: 0x0a))
        let line = String(decoding: bytes[..<newline], as: UTF8.self)
        let rewritten = line.replacingOccurrences(of: " C420jpeg", with: " C\(tag)")
        try #require(rewritten != line, "ffmpeg header has no C420jpeg: \(line)")
        bytes.replaceSubrange(..<newline, with: Array(rewritten.utf8))
        try dir.write("in.y4m", bytes)
    }
    return path
}

extension ExternalToolTests {
    @Test(arguments: ffmpegClips)
    func passThroughIsFrameIdenticalForFFmpegAndPlanesMatchItsRawDump(_ clip: FFmpegClip) async throws {
        let dir = try TemporaryDirectory()
        let input = try await generate(clip, in: dir)
        let output = dir.file("out.y4m")

        let source = try Y4MSource(path: input)
        #expect(source.geometry.widthPx == clip.widthPx)
        #expect(source.geometry.heightPx == clip.heightPx)
        #expect(source.geometry.chroma.y4mTag == clip.expectedTag)
        #expect(source.frameRate == (30, 1))
        #expect(!source.carriesTimestamps)
        // ffmpeg marks testsrc's YCbCr as limited range and gray as full; the sink carries that through.
        #expect(source.header.colorRange == (clip.pixelFormat == "gray" ? .full : .limited))

        // Copy through, stamping source times so the FRAME lines carry Xts_us (which ffmpeg must ignore).
        let sink = try Y4MSink(path: output, header: source.header, writeTimestamps: true)
        let buffer = FrameBuffer(geometry: source.geometry)
        var ourPlanes: [UInt8] = []
        var frames = 0
        while try source.readFrame(into: buffer) {
            #expect(buffer.sourceTimestampNs == nil)
            ourPlanes += buffer.pixels
            buffer.sourceTimestampNs = Int64(frames) * 33_333_000
            try sink.write(buffer)
            frames += 1
        }
        try sink.finish()
        #expect(frames == 5)

        // ffmpeg decodes our output to the same frames as its own file.
        let inputHashes = try await frameMD5s(input)
        #expect(inputHashes.count == 5)
        #expect(try await frameMD5s(output) == inputHashes)

        // Our planes are ffmpeg's planes, byte for byte (Y then Cb then Cr, per frame).
        let raw = try await ffmpeg(["-i", input, "-f", "rawvideo", "-"])
        #expect(raw.count == ourPlanes.count)
        #expect([UInt8](raw) == ourPlanes)

        // And our own reader gets the timestamps back.
        let reread = try Y4MSource(path: output)
        #expect(reread.carriesTimestamps)
        #expect(reread.header == source.header)
        #expect(reread.geometry == source.geometry)
        #expect(try readAllFrames(reread).map(\.timestampNs) == (0..<5).map { Int64($0) * 33_333_000 })
    }

    @Test(arguments: ["yuv420p", "yuv422p", "yuv444p"])
    func solidColourClipsHaveCbThenCr(pixelFormat: String) async throws {
        let dir = try TemporaryDirectory()
        for colour in solidColours {
            let path = dir.file("\(colour.name).y4m")
            try await ffmpeg([
                "-f", "lavfi", "-i", "color=c=\(colour.name):size=33x17:rate=30", "-frames:v", "2",
                "-pix_fmt", pixelFormat, "-f", "yuv4mpegpipe", path
            ])
            let source = try Y4MSource(path: path)
            let buffer = FrameBuffer(geometry: source.geometry)
            #expect(try source.readFrame(into: buffer))
            func near(_ plane: UnsafeMutableRawBufferPointer, _ value: UInt8) -> Bool {
                !plane.isEmpty && plane.allSatisfy { abs(Int($0) - Int(value)) <= 2 }
            }
            #expect(near(buffer.luma, colour.y), "\(colour.name) \(pixelFormat) Y")
            #expect(near(buffer.cb, colour.cb), "\(colour.name) \(pixelFormat) Cb = \(buffer.cb.first ?? 0)")
            #expect(near(buffer.cr, colour.cr), "\(colour.name) \(pixelFormat) Cr = \(buffer.cr.first ?? 0)")
        }
    }

    @Test func ffmpegDecodesFilesWeWroteFromScratchToOurPlanes() async throws {
        // A sink file colorcam wrote from scratch (no ffmpeg input) decodes in ffmpeg to exactly our planes.
        let dir = try TemporaryDirectory()
        for chroma in allChromaFormats {
            for (widthPx, heightPx) in [(1, 1), (3, 7), (321, 241)] {
                let geometry = FrameGeometry(widthPx: widthPx, heightPx: heightPx, chroma: chroma)
                let path = dir.file("ours-\(chroma)-\(widthPx)x\(heightPx).y4m")
                let sink = try Y4MSink(
                    path: path, header: Y4MHeader(geometry: geometry, frameRate: (30000, 1001)),
                    writeTimestamps: true)
                var planes: [UInt8] = []
                for index in 0..<3 {
                    let bytes = patternBytes(count: geometry.frameBytes, seed: UInt64(7 * index + widthPx))
                    planes += bytes
                    try sink.write(makeFrame(geometry, bytes, timestampNs: Int64(index) * 1_000))
                }
                try sink.finish()
                // ffmpeg derives a frame's pts from its byte offset assuming bare `FRAME\n` lines, so with Xts_us
                // on tiny frames its pts run ahead and a constant-rate output would duplicate frames; passthrough
                // timing shows each stored frame exactly once.
                let raw = try await ffmpeg(["-i", path, "-fps_mode", "passthrough", "-f", "rawvideo", "-"])
                #expect([UInt8](raw) == planes, "ffmpeg's decode of our \(geometry) file")
            }
        }
    }
}
