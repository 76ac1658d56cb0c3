import ColorcamCore
import Detect
import Foundation
import Infer
import Testing

@testable import PhotoPipeline

/// Colour hints kept per photo: content signatures, the memory that gives a photo found again its hints back, the
/// colour table's edits, the JSON request parser and the hints file.
@Suite struct HintMemoryTests {
    /// A picture with a bright blob at (0.2, 0.3) over a gradient, sampled on the signature's grid through `map`
    /// (grid point → picture point).
    static func grid(_ map: (Float, Float) -> (Float, Float) = { ($0, $1) }, blob: (Float, Float) = (0.2, 0.3))
        -> [Float]
    {
        let side = ContentSignature.side
        return (0..<(side * side)).map { i in
            let (u, v) = map((Float(i % side) + 0.5) / Float(side), (Float(i / side) + 0.5) / Float(side))
            let d = (u - blob.0) * (u - blob.0) + (v - blob.1) * (v - blob.1)
            return 100 * exp(-d / 0.01) + 30 * u + 10 * v
        }
    }

    static func signature(_ values: [Float]) -> ContentSignature {
        values.withUnsafeBufferPointer { ContentSignature(grid: $0) }
    }

    @Test func aTurnedPictureMatchesInTheRotationThatMapsItsPoints() {
        let stored = Self.signature(Self.grid())
        for r in 0..<4 {
            // The new view shows the stored picture turned r quarter turns: its point p is at mapFromOther(p, r).
            let turned = Self.signature(Self.grid { ContentSignature.mapFromOther($0, $1, rotation: (4 - r) % 4) })
            #expect(turned.rotation(matching: stored) == r, "rotation \(r)")
        }
        let other = Self.signature(Self.grid(blob: (0.8, 0.7)))
        #expect(other.rotation(matching: stored) == nil, "another picture")
        let flat = Self.signature([Float](repeating: 5, count: 1024))
        #expect(flat.rotation(matching: stored) == nil && flat.rotation(matching: flat) == nil, "a flat picture")
        #expect(ContentSignature(stored: [1, 2]) == nil && ContentSignature(stored: Self.grid() + [1]) == nil)
        #expect(ContentSignature(stored: Self.grid())?.rotation(matching: stored) == 0)
    }

    static func hints(_ points: [(Float, Float)]) -> [PhotoHint] {
        points.enumerated().map { PhotoHint(id: $0 + 1, u: $1.0, v: $1.1, red: 200, green: 40, blue: 40) }
    }

    @Test func theMemoryGivesAFoundPhotoItsHintsTurnedIntoItsView() throws {
        var memory = HintMemory()
        let stored = Self.signature(Self.grid())
        let id = Self.hints([(0.2, 0.3)]).withUnsafeBufferPointer {
            memory.store(id: nil, hints: $0, signature: stored)
        }
        let turned = Self.signature(Self.grid { ContentSignature.mapFromOther($0, $1, rotation: 3) })  // one turn
        let (found, recalled) = try #require(memory.recall(turned))
        #expect(found == id && recalled.count == 1)
        // The hint sat on the blob at (0.2, 0.3); in the turned view the blob is at mapFromOther(0.2, 0.3, 1).
        let want = ContentSignature.mapFromOther(0.2, 0.3, rotation: 1)
        #expect(abs(recalled[0].point.u - want.u) < 1e-6 && abs(recalled[0].point.v - want.v) < 1e-6)
        #expect(memory.recall(Self.signature(Self.grid(blob: (0.8, 0.7)))) == nil)
        // Emptied: forgotten.
        let revision = memory.revision
        #expect([PhotoHint]().withUnsafeBufferPointer { memory.store(id: id, hints: $0, signature: nil) } == nil)
        #expect(memory.photos.isEmpty && memory.revision > revision && memory.recall(stored) == nil)
    }

    @Test func theMemoryKeepsTheNewestPhotosAndSignsARecordOnce() {
        var memory = HintMemory()
        let one = Self.hints([(0.5, 0.5)])
        for _ in 0..<(HintMemory.capacity + 5) {
            _ = one.withUnsafeBufferPointer { memory.store(id: nil, hints: $0, signature: nil) }
        }
        #expect(memory.photos.count == HintMemory.capacity)
        let last = memory.photos.last!.id
        memory.sign(id: last, Self.signature(Self.grid()))
        memory.sign(id: last, Self.signature(Self.grid(blob: (0.8, 0.7))))  // already signed: kept
        #expect(memory.recall(Self.signature(Self.grid()))?.id == last)
    }

    static func table() -> ColourTable { ColourTable(capacity: 2, abCount: 8) }

    @Test func tableEditsKeepIdsDropTheOldestAndMoveTheGeneration() {
        var t = Self.table()
        defer { t.deallocate() }
        _ = t.claim(7, frame: 0, evictBefore: -1)
        let i = t.index(of: 7)!
        let first = t.addHint(entry: i, u: 0.1, v: 0.2, red: 255, green: 0, blue: 0)
        #expect(t.entries[i].hintGeneration == 1 && t.entries[i].rememberedID != nil && t.memory.photos.count == 1)
        for k in 1..<(PhotoHints.maxPerPhoto + 2) {
            _ = t.addHint(entry: i, u: Float(k) / 100, v: 0.5, red: 0, green: 0, blue: 255)
        }
        let hints = t.hints(entry: i)
        #expect(hints.count == PhotoHints.maxPerPhoto && !hints.contains { $0.id == first.id }, "the oldest went")
        #expect(Set(hints.map(\.id)).count == hints.count, "ids are unique")
        let moved = t.moveHint(entry: i, id: hints[3].id, u: 0.9, v: 0.8, colour: (0, 255, 0))
        #expect(moved?.point.u == 0.9 && moved?.colourText == "#00ff00" && t.hints(entry: i)[3] == moved)
        #expect(t.moveHint(entry: i, id: 99_999, u: 0, v: 0, colour: nil) == nil)
        #expect(t.removeHint(entry: i, id: hints[0].id) && !t.removeHint(entry: i, id: hints[0].id))
        #expect(t.hints(entry: i).count == PhotoHints.maxPerPhoto - 1)
        #expect(t.memory.photos[0].hints == t.hints(entry: i), "the memory follows every edit")
        let generation = t.entries[i].hintGeneration
        #expect(t.clearHints(entry: i) == PhotoHints.maxPerPhoto - 1)
        #expect(t.entries[i].hintGeneration == generation + 1 && t.memory.photos.isEmpty)
    }

    @Test func aNewTrackThatLooksLikeARememberedPhotoGetsItsHintsOnce() {
        var t = Self.table()
        defer { t.deallocate() }
        let side = ContentSignature.side
        let picture = Self.grid()
        _ = t.claim(1, frame: 0, evictBefore: -1)
        let i = t.index(of: 1)!
        t.entries[i].thumbnail.update(from: picture, count: side * side)
        t.entries[i].hasColour = true
        _ = t.addHint(entry: i, u: 0.2, v: 0.3, red: 10, green: 200, blue: 10)
        // The print goes and comes back under track 2.
        _ = t.claim(2, frame: 100, evictBefore: 50)
        let j = t.index(of: 2)!
        #expect(picture.withUnsafeBufferPointer { t.recallHints(entry: j, thumbnail: $0.baseAddress!) })
        #expect(t.hints(entry: j).map(\.colourText) == ["#0ac80a"] && t.entries[j].hintGeneration == 1)
        #expect(t.entries[j].rememberedID == t.entries[i].rememberedID && t.memory.photos.count == 1)
        #expect(!picture.withUnsafeBufferPointer { t.recallHints(entry: j, thumbnail: $0.baseAddress!) }, "once")
    }

    @Test func requestsParseOneHintOrAListAndRefuseWithAReason() throws {
        func parse(_ text: String) throws(HintRequestError) -> [HintRequest] { try HintRequest.parse(Array(text.utf8)) }
        let one = try parse(##"{"x": 12.5, "y": 30, "color": "#3060C0"}"##)
        #expect(one.count == 1 && one[0].place == .frame(xPx: 12.5, yPx: 30) && one[0].colour! == (0x30, 0x60, 0xC0))
        let list = try parse(##"[{"u": 0, "v": 1, "color": "ff0000"}, {"color": "#000000"}, {"u": 0.5, "v": 0.5}]"##)
        #expect(list.map(\.place) == [.photo(u: 0, v: 1), nil, .photo(u: 0.5, v: 0.5)] && list[2].colour == nil)
        let bad: [(String, String)] = [
            ("{", "not JSON"), ("3", "a JSON object"), (##"{"x": 1}"##, "x and y"), (##"{"x": 1, "v": 2}"##, "x and y"),
            (##"{"u": 2, "v": 0.5}"##, "0…1"), (##"{"u": true, "v": 0.5}"##, "x and y"),
            (##"{"color": 5}"##, "#rrggbb"),
            (##"{"color": "#12345"}"##, "#rrggbb"), (##"{"colour": "#123456"}"##, "unknown field \"colour\""),
            (##"[{"u": 0.5, "v": 0.5}, {"x": "1", "y": 2}]"##, "hint 1: ")
        ]
        for (text, says) in bad {
            #expect(throws: HintRequestError.self, "\(text)") { try parse(text) }
            do { _ = try parse(text) } catch { #expect(error.description.contains(says), "\(text): \(error)") }
        }
    }

    static func path(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("cc-hints-\(getpid())-\(name)").path
    }

    @Test func theHintsFileRoundTripsAndIsReplacedWhole() throws {
        let path = Self.path("roundtrip.json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try? FileManager.default.removeItem(atPath: path)
        let file = try HintsFile(path: path)
        #expect(try file.load().isEmpty, "a missing file is an empty one")
        let photos = [
            RememberedHints(id: 1, signature: Self.signature(Self.grid()), hints: Self.hints([(0.25, 0.5), (1, 0)])),
            RememberedHints(id: 2, signature: nil, hints: Self.hints([(0.5, 0.5)]))  // never colorized: not written
        ]
        file.save(photos, revision: 3)
        file.save([], revision: 2)  // older: skipped
        file.flush()
        let loaded = try file.load()
        #expect(loaded.count == 1 && loaded[0].hints.map(\.point) == photos[0].hints.map(\.point))
        #expect(loaded[0].hints.map(\.colourText) == ["#c82828", "#c82828"])
        #expect(loaded[0].signature!.rotation(matching: photos[0].signature!) == 0)
        let leftovers = try FileManager.default.contentsOfDirectory(
            atPath: (path as NSString).deletingLastPathComponent)
        #expect(!leftovers.contains(".\((path as NSString).lastPathComponent).partial"), "no partial file left")
    }

    @Test func aBadHintsFileIsOneLineNamingTheFileAndTheEntry() throws {
        let signature = "[" + Self.grid().map { "\($0)" }.joined(separator: ",") + "]"
        let cases: [(String, String)] = [
            ("{", "not JSON"), (##"{"photos": []}"##, "not a colorcam hints file"),
            (##"{"format": "colorcam-hints", "version": 2, "photos": []}"##, "version 2"),
            (
                ##"{"format": "colorcam-hints", "version": 1, "photos": [{"signature": [1, 2], "hints": []}]}"##,
                "photos[0].signature wants 1024 numbers"
            ),
            (
                ##"{"format": "colorcam-hints", "version": 1, "photos": [{"signature": \##(signature), "hints": [{"u": 0.5, "v": 0.5, "color": "#ff0000"}, {"u": 3, "v": 0.5, "color": "#ff0000"}]}]}"##,
                "photos[0].hints[1] wants"
            )
        ]
        for (text, says) in cases {
            do {
                _ = try HintsFile.parse(Data(text.utf8), file: "h.json")
                Issue.record("\(text) parsed")
            } catch let error as HintsFileError {
                #expect(error.kind == .badData && error.description.hasPrefix("h.json: "), "\(error)")
                #expect(error.description.contains(says) && !error.description.contains("\n"), "\(error)")
            }
        }
        #expect(throws: HintsFileError.self) { try HintsFile(path: "/nonexistent-dir-cc/h.json") }
        #expect(throws: HintsFileError.self) { try HintsFile(path: FileManager.default.temporaryDirectory.path) }
    }
}
