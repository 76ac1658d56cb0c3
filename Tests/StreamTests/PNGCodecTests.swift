import ColorcamCore
import Foundation
import Testing

/// ColorcamCore's PNG codec on its own: what the folder source, the frame writer and the colorizer's image files
/// share.
extension ExternalToolTests {
    @Test func anImageWrittenReadsBackByteForByteAndADecoderIsReusable() throws {
        let dir = try TemporaryDirectory()
        let (w, h) = (7, 5)
        let pixels = (0..<(w * h * 3)).map { UInt8(($0 * 37 + 11) % 256) }
        try pixels.withUnsafeBytes { try PNGEncoder.writeRGB($0, widthPx: w, heightPx: h, to: dir.file("a.png")) }
        let decoder = PNGDecoder()
        // A failed begin leaves the decoder usable for the next image.
        let garbage = try dir.write("bad.png", Array("not a PNG at all".utf8))
        #expect(throws: PNGFailure.self) { try decoder.begin(file: garbage) }
        for _ in 0..<2 {
            let header = try decoder.begin(file: dir.file("a.png"))
            #expect(header == PNGHeader(widthPx: w, heightPx: h, sixteenBit: false))
            var back = [UInt8](repeating: 0, count: w * h * 3)
            try back.withUnsafeMutableBytes { try decoder.finishRGB(into: $0.baseAddress!) }
            #expect(back == pixels)
        }
        // The same bytes from memory; cancel ends an image without decoding it, and twice is harmless.
        let bytes = try readBytes(dir.file("a.png"))
        let header = try bytes.withUnsafeBytes { raw in
            defer { decoder.cancel() }
            return try decoder.begin(bytes: raw)
        }
        #expect(header.widthPx == w && header.heightPx == h)
        decoder.cancel()  // nothing begun: a no-op
        #expect(try decoder.begin(file: dir.file("a.png")).widthPx == w, "still usable after the cancels")
    }

    @Test func failuresCarryLibpngsReasonAndSixteenBitImagesAreFlagged() async throws {
        let dir = try TemporaryDirectory()
        let decoder = PNGDecoder()
        do {
            _ = try decoder.begin(file: dir.file("missing.png"))
            Issue.record("a missing file began")
        } catch let failure as PNGFailure {
            #expect(!failure.message.isEmpty && !failure.message.contains("\n"))
        }
        let rgb: [UInt8] = [0, 0, 0]
        #expect(throws: PNGFailure.self) {
            try rgb.withUnsafeBytes {
                try PNGEncoder.writeRGB($0, widthPx: 1, heightPx: 1, to: dir.file("no/such/dir.png"))
            }
        }
        let raw = try dir.write("grey.raw", [UInt8](repeating: 200, count: 4 * 2 * 6))
        _ = try await ffmpeg([
            "-f", "rawvideo", "-pix_fmt", "rgb48le", "-s", "4x2", "-i", raw, "-frames:v", "1",
            "-pix_fmt", "rgb48be", "-f", "image2", dir.file("deep.png")
        ])
        #expect(try decoder.begin(file: dir.file("deep.png")) == PNGHeader(widthPx: 4, heightPx: 2, sixteenBit: true))
        decoder.cancel()
    }
}
