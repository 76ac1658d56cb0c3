import Detect
import Foundation
import Testing

@testable import PhotoPipeline

@Suite struct SaverTests {
    func colour(track: Int, quality: Double, picture: (Double, Double) -> Double, rotate: Bool = false) -> SavedColour {
        let c = SavedColour(inputSizePx: 64, abWidthPx: 16, abHeightPx: 16)
        for v in 0..<64 {
            for u in 0..<64 {
                let (x, y) = rotate ? (Double(63 - v), Double(u)) : (Double(u), Double(v))
                c.lightness[v * 64 + u] = Float(picture((x + 0.5) / 64, (y + 0.5) / 64) / 2.55)
            }
        }
        for i in 0..<(2 * 16 * 16) { c.ab[i] = i < 256 ? 20 : -10 }
        c.quality = quality; c.trackID = track; c.frame = track * 10; c.modelName = "test"
        c.quad = Quad(PixelPoint(0, 0), PixelPoint(100, 0), PixelPoint(100, 80), PixelPoint(0, 80))
        return c
    }

    func directory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent(
            "cc-saver-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        ).path
    }

    @Test func theSamePhotoUnderANewTrackIsSavedOnceAndOnlyABetterViewReplacesIt() throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let saver = try PhotoSaver(directory: dir)
        saver.submit(colour(track: 3, quality: 100, picture: landscape))
        saver.submit(colour(track: 9, quality: 50, picture: landscape))  // lost and found: worse
        saver.submit(colour(track: 12, quality: 200, picture: landscape, rotate: true))  // turned 90°, better
        saver.submit(colour(track: 4, quality: 80, picture: portrait))
        try saver.finish()
        #expect(saver.savedNames == ["photo-3", "photo-4"])
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(files == ["photo-3.json", "photo-3.png", "photo-4.json", "photo-4.png"])
        let json = try String(contentsOfFile: dir + "/photo-3.json", encoding: .utf8)
        #expect(json.contains("\"track\": 12"))  // the better view's sidecar
    }

    @Test func aFileInPlaceOfTheDirectoryIsAUsageError() throws {
        let path = directory()
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: (any Error).self) { try PhotoSaver(directory: path) }
    }
}
