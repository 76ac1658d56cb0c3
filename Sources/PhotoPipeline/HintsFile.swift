import ColorcamCore
import Dispatch
import Foundation
import Glibc
import Infer

/// Why a hints file could not be read or written: one line naming the file and what was wrong.
public struct HintsFileError: ColorcamError {
    public let kind: FailureKind
    public let file: String
    public let message: String
    public var description: String { "\(file): \(message)" }
}

/// `--hints-file FILE.json`: every remembered photo's colour hints, kept across restarts. The file is JSON:
///
///     {"format": "colorcam-hints", "version": 1,
///      "photos": [{"signature": [1024 numbers], "hints": [{"u": 0.31, "v": 0.62, "color": "#3060c0"}, …]}, …]}
///
/// `signature`: the photo's `ContentSignature` (32×32, row-major; how it is recognised), `u`/`v`: fractions of the
/// photo's width and height in its own coordinates (0…1), `color`: the sRGB colour chosen (the photo keeps its own
/// lightness). A missing file is an empty one (written at the first hint). Writes are atomic (a temporary file in the
/// same directory, flushed, then renamed over it), so a crash leaves the old file or the new one, never a part.
///
/// Threading: `load` on the caller's thread; `save` from any thread (returns at once: the newest revision is written
/// on the store's serial queue, older ones waiting are skipped); `flush` waits for the writes.
public final class HintsFile: Sendable {
    public let path: String
    private let queue = DispatchQueue(label: "colorcam.hints-file")
    /// `pending`: the newest photos waiting for the queue; `newest`: the newest revision taken (written, being
    /// written or pending); `failed`: the last write failed (warned once until one succeeds).
    private let state = Locked<(pending: (revision: Int, photos: [RememberedHints])?, newest: Int, failed: Bool)>(
        (nil, 0, false))

    /// Checks the file can be used: an existing one must be a regular file; a missing one's directory must exist.
    public init(path: String) throws {
        self.path = path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { throw HintsFileError(kind: .usage, file: path, message: "is a directory") }
        } else {
            let dir = FilePath.directory(of: path)
            guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw HintsFileError(
                    kind: .missingInput, file: path, message: "its directory \(dir) does not exist")
            }
        }
    }

    /// The photos the file remembers ([] when it does not exist yet). Throws a one-line `badData` error naming the
    /// file and the entry for a file that is not a hints file.
    func load() throws -> [RememberedHints] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw HintsFileError(kind: .missingInput, file: path, message: "cannot read")
        }
        return try Self.parse(data, file: path)
    }

    static func parse(_ data: Data, file: String) throws -> [RememberedHints] {
        func bad(_ message: String) -> HintsFileError { HintsFileError(kind: .badData, file: file, message: message) }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            let detail = (error as NSError).userInfo["NSDebugDescription"] as? String ?? "\(error)"
            throw bad("not JSON (\(detail))")
        }
        guard let top = object as? [String: Any], top["format"] as? String == "colorcam-hints" else {
            throw bad("not a colorcam hints file (no \"format\": \"colorcam-hints\")")
        }
        guard (top["version"] as? NSNumber)?.intValue == 1 else {
            throw bad("hints file version \(top["version"].map { "\($0)" } ?? "missing") (this colorcam reads 1)")
        }
        guard let photos = top["photos"] as? [Any] else { throw bad("\"photos\" is not a list") }
        return try photos.enumerated().map { p, photo in
            guard let photo = photo as? [String: Any] else { throw bad("photos[\(p)] is not an object") }
            guard let numbers = photo["signature"] as? [NSNumber],
                let signature = ContentSignature(stored: numbers.map(\.floatValue))
            else {
                throw bad("photos[\(p)].signature wants \(ContentSignature.side * ContentSignature.side) numbers")
            }
            guard let hints = photo["hints"] as? [Any], hints.count <= PhotoHints.maxPerPhoto else {
                throw bad("photos[\(p)].hints wants a list of at most \(PhotoHints.maxPerPhoto) hints")
            }
            let parsed = try hints.enumerated().map { h, hint in
                guard let hint = hint as? [String: Any],
                    let parsed = HintRequest.photoHint(hint, id: h + 1)
                else {
                    throw bad("photos[\(p)].hints[\(h)] wants {\"u\": 0…1, \"v\": 0…1, \"color\": \"#rrggbb\"}")
                }
                return parsed
            }
            return RememberedHints(id: p + 1, signature: signature, hints: parsed)
        }
    }

    /// The file's text for `photos` (those with a signature: a photo never colorized cannot be recognised).
    static func text(_ photos: [RememberedHints]) -> String {
        var out = "{\"format\": \"colorcam-hints\", \"version\": 1, \"photos\": ["
        for (p, photo) in photos.filter({ $0.signature != nil }).enumerated() {
            out += p == 0 ? "\n" : ",\n"
            out += "{\"signature\": ["
            out += photo.signature!.values.map { String(format: "%.5f", $0) }.joined(separator: ",")
            out += "],\n \"hints\": ["
            out += photo.hints.map {
                "{\"u\": \(String(format: "%.5f", $0.point.u)), \"v\": \(String(format: "%.5f", $0.point.v)), "
                    + "\"color\": \"\($0.colourText)\"}"
            }.joined(separator: ", ")
            out += "]}"
        }
        return out + "\n]}\n"
    }

    /// Writes `photos` as revision `revision` (skipped when a newer one was taken: written, being written or waiting).
    func save(_ photos: [RememberedHints], revision: Int) {
        let schedule: Bool = state.withLock { s in
            guard revision > s.newest else { return false }
            s.newest = revision
            let wasIdle = s.pending == nil
            s.pending = (revision, photos)
            return wasIdle
        }
        guard schedule else { return }
        queue.async { [self] in
            let taken = state.withLock { s -> [RememberedHints]? in
                defer { s.pending = nil }
                return s.pending?.photos
            }
            guard let photos = taken else { return }
            do {
                try write(Self.text(photos))
                state.withLock { $0.failed = false }
            } catch {
                let first = state.withLock { s -> Bool in
                    defer { s.failed = true }
                    return !s.failed
                }
                if first { Log.warning("\(error); hints are kept in memory only until a write succeeds") }
            }
        }
    }

    /// Waits for the writes asked for so far.
    public func flush() { queue.sync {} }

    func write(_ text: String) throws {
        let name = (path as NSString).lastPathComponent
        let temporary = (FilePath.directory(of: path) as NSString).appendingPathComponent(".\(name).partial")
        if let failure = FileDescriptor.writeFlushed(Array(text.utf8), to: temporary) {
            unlink(temporary)
            throw HintsFileError(kind: .ioError, file: temporary, message: "cannot write (\(failure))")
        }
        guard rename(temporary, path) == 0 else {
            let reason = Errno.current
            unlink(temporary)
            throw HintsFileError(kind: .ioError, file: path, message: "cannot replace (\(reason))")
        }
    }
}
