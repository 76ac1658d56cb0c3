import ColorcamCore
import Detect
import Dispatch
import Foundation
import Infer
import Synchronization

/// Writes `--save-photos`: per physical photo one colorized PNG (`photo-<track>.png`, long side = the model's input
/// size, at the photo's estimated aspect), turned the way its colours were computed (`uprightTurns`: the picture's up
/// as the orientation head judged it, whichever way the print lay on the table), and a JSON sidecar
/// (`photo-<track>.json`: track, first and last frame, the frame of the saved view and its corners in the frame listed
/// from the saved picture's top-left, clockwise; the fraction of the print something covered in it
/// (`CoverMask.measure`), the quarter turns (`upright_turns`), model, size).
///
/// One file per physical photo: a photo that comes back under a new track id (lost and found again) is recognised by
/// its content (normalised correlation of a 32×32 lightness thumbnail, any of 4 rotations, ≥ 0.9) and its files are
/// replaced only by a better view (larger in the frame, less covered). Each file is written to a temporary name in the same
/// directory and renamed into place, so a reader never sees a partial file.
///
/// Threading: `submit` from any thread (returns at once; work runs on the saver's serial queue); `finish` waits for
/// the queue and throws the first write error.
final class PhotoSaver: Sendable {
    let directory: String
    private let queue = DispatchQueue(label: "colorcam.save-photos")
    private struct Saved {
        var name: String
        var quality: Double
        var signature: ContentSignature
    }
    private let state = Locked<(saved: [Saved], firstError: Error?)>(([], nil))

    init(directory: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw ImageFileError(.usage, file: directory, "--save-photos wants a directory; this is a file")
            }
        } else {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw ImageFileError(.ioError, file: directory, "cannot create the --save-photos directory")
            }
        }
        self.directory = directory
    }

    func submit(_ colour: SavedColour) {
        queue.async { [self] in
            do {
                try save(colour)
            } catch {
                Log.error("\(error)")
                state.withLock { if $0.firstError == nil { $0.firstError = error } }
            }
        }
    }

    func finish() throws {
        queue.sync {}
        if let error = state.withLock({ $0.firstError }) { throw error }
    }

    /// The files written so far (names without extension), for tests and logs.
    var savedNames: [String] { queue.sync {}; return state.withLock { $0.saved.map(\.name) } }

    private func save(_ colour: SavedColour) throws {
        let signature = Self.signature(colour)
        let (name, isBetter): (String, Bool) = state.withLock { s in
            for i in s.saved.indices where s.saved[i].signature.rotation(matching: signature) != nil {
                if colour.quality > s.saved[i].quality {
                    s.saved[i].quality = colour.quality
                    s.saved[i].signature = signature
                    return (s.saved[i].name, true)
                }
                return (s.saved[i].name, false)
            }
            let name = "photo-\(colour.trackID)"
            s.saved.append(Saved(name: name, quality: colour.quality, signature: signature))
            return (name, true)
        }
        guard isBetter else { return }
        let image = Self.render(colour)
        let base = (directory as NSString).appendingPathComponent(name)
        let temporaryPNG = (directory as NSString).appendingPathComponent(".\(name).partial.png")
        try ImageFile.write(image, to: temporaryPNG)
        try Self.rename(temporaryPNG, to: base + ".png")
        let q = colour.quad
        let corners = QuarterTurn.cornerOrder(turns: colour.uprightTurns)
            .map { "[\(Self.number(q[$0].x)), \(Self.number(q[$0].y))]" }.joined(separator: ", ")
        let json = """
            {"track": \(colour.trackID), "first_frame": \(colour.firstFrame), "last_frame": \(colour.lastFrame), \
            "frame": \(colour.frame), "corners": [\(corners)], "covered": \(String(format: "%.3f", colour.coveredFraction)), \
            "upright_turns": \(colour.uprightTurns), "model": \(JSONText.quoted(colour.modelName)), "width": \(image.widthPx), "height": \(image.heightPx)}

            """
        let temporaryJSON = (directory as NSString).appendingPathComponent(".\(name).partial.json")
        guard FileManager.default.createFile(atPath: temporaryJSON, contents: Data(json.utf8)) else {
            throw ImageFileError(.ioError, file: temporaryJSON, "cannot write the photo's JSON sidecar")
        }
        try Self.rename(temporaryJSON, to: base + ".json")
    }

    static func number(_ v: Double) -> String { String(format: "%.2f", v) }

    static func rename(_ from: String, to: String) throws {
        guard Foundation.rename(from, to) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(from)
            throw ImageFileError(.ioError, file: to, "cannot rename the finished file into place (\(reason))")
        }
    }

    /// RGB at the photo's aspect, long side = the model's input size, turned the way its colours were computed
    /// (`uprightTurns`): the picture's up as the orientation head judged it, not as the print lay.
    static func render(_ c: SavedColour) -> RGBImage {
        QuarterTurn.turned(renderAsItLies(c), turns: c.uprightTurns)
    }

    /// The rectified view as the print lay in the frame (its outline's first corner at the top-left).
    static func renderAsItLies(_ c: SavedColour) -> RGBImage {
        let (w, h) = Rectifier.uprightSize(for: c.quad, longSidePx: c.inputSizePx)
        var lab = [Float](repeating: 0, count: 3 * w * h)
        let n = c.inputSizePx
        for y in 0..<h {
            for x in 0..<w {
                let u = (Double(x) + 0.5) / Double(w), v = (Double(y) + 0.5) / Double(h)
                let l = bilinear(c.lightness, n, n, u * Double(n), v * Double(n))
                let a = bilinear(c.ab, c.abWidthPx, c.abHeightPx, u * Double(c.abWidthPx), v * Double(c.abHeightPx))
                let b = bilinear(
                    c.ab + c.abWidthPx * c.abHeightPx, c.abWidthPx, c.abHeightPx,
                    u * Double(c.abWidthPx), v * Double(c.abHeightPx))
                lab[3 * (y * w + x)] = l
                lab[3 * (y * w + x) + 1] = a * c.abScale
                lab[3 * (y * w + x) + 2] = b * c.abScale
            }
        }
        var pixels = [UInt8](repeating: 0, count: 3 * w * h)
        lab.withUnsafeBufferPointer { Lab.convertLabToRGB8($0.baseAddress!, &pixels, pixelCount: w * h) }
        return RGBImage(widthPx: w, heightPx: h, pixels: pixels)
    }

    static func bilinear(_ p: UnsafePointer<Float>, _ w: Int, _ h: Int, _ x: Double, _ y: Double) -> Float {
        let fx = min(max(x - 0.5, 0), Double(w - 1)), fy = min(max(y - 0.5, 0), Double(h - 1))
        let x0 = Int(fx), y0 = Int(fy), x1 = min(x0 + 1, w - 1), y1 = min(y0 + 1, h - 1)
        let ax = Float(fx - Double(x0)), ay = Float(fy - Double(y0))
        let top = p[y0 * w + x0] + (p[y0 * w + x1] - p[y0 * w + x0]) * ax
        let bottom = p[y1 * w + x0] + (p[y1 * w + x1] - p[y1 * w + x0]) * ax
        return top + (bottom - top) * ay
    }

    /// The saved lightness's content signature (32×32 samples).
    static func signature(_ c: SavedColour) -> ContentSignature {
        let side = ContentSignature.side, n = c.inputSizePx
        var t = [Float](repeating: 0, count: side * side)
        for v in 0..<side {
            for u in 0..<side {
                t[v * side + u] = bilinear(
                    c.lightness, n, n, (Double(u) + 0.5) * Double(n) / Double(side),
                    (Double(v) + 0.5) * Double(n) / Double(side))
            }
        }
        return t.withUnsafeBufferPointer { ContentSignature(grid: $0) }
    }
}
