import Detect
import Foundation
import Infer
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

    @Test(arguments: 0..<4)
    func aPhotoIsSavedTheWayItsColoursWereComputedWithItsCornersFromTheSavedTopLeft(turns: Int) throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let saver = try PhotoSaver(directory: dir)
        let c = colour(track: 5, quality: 100, picture: landscape)
        c.uprightTurns = turns
        saver.submit(c)
        try saver.finish()
        let saved = try ImageFile.read(dir + "/photo-5.png")
        let asItLies = PhotoSaver.renderAsItLies(c)
        #expect((asItLies.widthPx, asItLies.heightPx) == (64, 51))  // the 100 × 80 outline's aspect
        let turned = QuarterTurn.turned(asItLies, turns: turns)
        #expect((saved.widthPx, saved.heightPx) == (turned.widthPx, turned.heightPx))
        #expect(saved.pixels == turned.pixels)
        let sidecar = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: dir + "/photo-5.json")))
        let json = try #require(sidecar as? [String: Any])
        let corners = try #require(json["corners"] as? [[Double]])
        let outline = [[0.0, 0.0], [100, 0], [100, 80], [0, 80]]
        #expect(corners == (0..<4).map { outline[($0 + turns) % 4] })
        #expect(json["upright_turns"] as? Int == turns)
        #expect(json["width"] as? Int == saved.widthPx && json["height"] as? Int == saved.heightPx)
    }

    @Test func aFileInPlaceOfTheDirectoryIsAUsageError() throws {
        let path = directory()
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: (any Error).self) { try PhotoSaver(directory: path) }
    }
}
