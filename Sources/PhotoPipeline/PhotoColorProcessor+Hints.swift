import ColorcamCore
import Detect
import Infer
import Synchronization

/// Why a hint edit was refused: one line (the preview's API answers it with a 4xx status).
public enum HintEditError: Error, Equatable, CustomStringConvertible {
    /// The model cannot follow hints (no hint inputs, or it runs on a server).
    case cannotFollowHints(String)
    case unknownPhoto(Int)
    /// A place in frame pixels on a photo not in the last frame analysed.
    case notInView(Int)
    case outsidePhoto(photo: Int, xPx: Double, yPx: Double)
    case unknownHint(photo: Int, hint: Int)
    case tooMany(given: Int)
    /// A new hint needs a place and a colour.
    case incomplete
    /// The request itself is malformed (`HintRequestError`'s reason).
    case badRequest(String)

    public var description: String {
        switch self {
        case .cannotFollowHints(let why): return why
        case .unknownPhoto(let id): return "no photo \(id)"
        case .notInView(let id): return "photo \(id) is not in view: give the place as u, v (fractions of the photo)"
        case .outsidePhoto(let id, let x, let y):
            return "\(PhotoHints.text(x)),\(PhotoHints.text(y)) lies outside photo \(id)"
        case .unknownHint(let photo, let hint): return "photo \(photo) has no hint \(hint)"
        case .tooMany(let given):
            return "\(given) hints in one request; a photo keeps at most \(PhotoHints.maxPerPhoto)"
        case .incomplete: return "a new hint wants a place (x, y or u, v) and a color"
        case .badRequest(let why): return why
        }
    }
}

/// A photo's hints as the API lists them.
public struct PhotoHintsView: Sendable, Equatable {
    public let photo: Int
    /// In the last frame analysed.
    public let inView: Bool
    /// Its corners in the last frame that showed it (frame pixels).
    public let corners: [PixelPoint]
    public let hints: [PhotoHint]
}

/// The control plane of colour hints (`colorcam live`'s preview API): list, add, move and remove a photo's hints.
/// Any thread; each call takes the colour table's lock for a few microseconds and allocates. An edit colorizes the
/// photo again (the trace's reason `hint`, one inference in flight as always) and is written to the hints file, when
/// there is one.
extension PhotoColorProcessor {
    /// A colour hint clicked on the output picture: the photo under pixel `xPx`,`yPx` of frame `frame` (or the first
    /// frame analysed after it) is that colour there, in its own coordinates from then on. Any thread. False when
    /// too many clicks wait; a click on no photo is logged when its frame is analysed.
    @discardableResult
    public func addHint(frame: Int, xPx: Double, yPx: Double, red: UInt8, green: UInt8, blue: UInt8) -> Bool {
        hints.click(PhotoHints.Click(frame: frame, xPx: xPx, yPx: yPx, red: red, green: green, blue: blue))
    }

    /// Photos in view or with hints, by id.
    public func photoHints() -> [PhotoHintsView] {
        table.withLock { t in
            t.entries.indices.filter {
                t.entries[$0].trackID >= 0 && (t.entries[$0].lastSeenFrame == t.frame || t.entries[$0].hintCount > 0)
            }
            .map { view(t, $0) }.sorted { $0.photo < $1.photo }
        }
    }

    /// Photo `photo`'s hints.
    public func photoHints(photo: Int) throws(HintEditError) -> PhotoHintsView {
        try edit(photo: photo, checkModel: false) { t, i throws(HintEditError) in view(t, i) }
    }

    /// Adds hints to `photo` (each with a place and a colour); when it then holds more than
    /// `PhotoHints.maxPerPhoto`, the oldest go.
    public func addHints(photo: Int, _ requests: [HintRequest]) throws(HintEditError) -> [PhotoHint] {
        guard requests.count <= PhotoHints.maxPerPhoto else { throw .tooMany(given: requests.count) }
        return try edit(photo: photo) { t, i throws(HintEditError) in
            var points: [(Float, Float, (red: UInt8, green: UInt8, blue: UInt8))] = []
            for r in requests {
                guard let place = r.place, let colour = r.colour else { throw .incomplete }
                let (u, v) = try point(place, photo: photo, entry: t.entries[i], frame: t.frame)
                points.append((u, v, colour))
            }
            return points.map {
                t.addHint(entry: i, u: $0.0, v: $0.1, red: $0.2.red, green: $0.2.green, blue: $0.2.blue)
            }
        }
    }

    /// Moves hint `hint` of `photo` (to `request`'s place, with its colour: either may be left out).
    public func moveHint(photo: Int, hint: Int, _ request: HintRequest) throws(HintEditError) -> PhotoHint {
        try edit(photo: photo) { t, i throws(HintEditError) in
            guard let old = t.hints(entry: i).first(where: { $0.id == hint }) else {
                throw .unknownHint(photo: photo, hint: hint)
            }
            let (u, v) =
                try request.place.map { place throws(HintEditError) in
                    try point(place, photo: photo, entry: t.entries[i], frame: t.frame)
                } ?? (old.point.u, old.point.v)
            return t.moveHint(entry: i, id: hint, u: u, v: v, colour: request.colour)!
        }
    }

    /// Removes hint `hint` of `photo`, or all its hints when `hint` is nil; returns how many went.
    public func removeHints(photo: Int, hint: Int?) throws(HintEditError) -> Int {
        try edit(photo: photo, checkModel: false) { t, i throws(HintEditError) in
            guard let hint else { return t.clearHints(entry: i) }
            guard t.removeHint(entry: i, id: hint) else { throw .unknownHint(photo: photo, hint: hint) }
            return 1
        }
    }

    /// What the model thinks the colour at `place` of `photo` could be: the distinct colours among the most likely
    /// bins of its ab distribution there (`ABSuggestions.modes`), in the colours `photo` shows now, most likely first;
    /// [] when the model has no distribution or the photo has no colours yet.
    public func colourSuggestions(photo: Int, at place: HintPlace, count: Int = 3) throws(HintEditError)
        -> [ABSuggestions.Suggestion]
    {
        let distribution = models.bundle.distribution
        return try edit(photo: photo, checkModel: false) { t, i throws(HintEditError) in
            let e = t.entries[i]
            let (u, v) = try point(place, photo: photo, entry: e, frame: t.frame)
            guard let distribution, e.hasSuggestions, let bins = e.suggestionBins,
                let probabilities = e.suggestionProbabilities
            else { return [] }
            let h = distribution.shape[2], w = distribution.shape[3]
            let cell = min(h - 1, Int(v * Float(h))) * w + min(w - 1, Int(u * Float(w)))
            return ABSuggestions.modes(
                binIndices: bins, probabilities: probabilities, cell: cell, distribution: distribution, count: count)
        }
    }

    /// Runs `body` on `photo`'s entry under the lock, then saves the hints file when the memory changed.
    private func edit<T>(
        photo: Int, checkModel: Bool = true, _ body: (inout ColourTable, Int) throws(HintEditError) -> T
    ) throws(HintEditError) -> T {
        if checkModel, let why = hintRefusal { throw .cannotFollowHints(why) }
        let result: Result<T, HintEditError> = table.withLock { t in
            guard let i = t.index(of: photo) else { return .failure(.unknownPhoto(photo)) }
            do throws(HintEditError) {
                let value = try body(&t, i)
                saveHintsIfChanged(t)
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Why hints cannot be followed with the running model; nil when they can.
    var hintRefusal: String? {
        if options.remote != nil { return HintsRefused.remote(models.bundle).description }
        if models.bundle.hintInputs == nil { return HintsRefused.noHintInputs(models.bundle).description }
        return nil
    }

    /// Writes the hints file when `t.memory` changed since it was last written. Under the table lock.
    func saveHintsIfChanged(_ t: ColourTable) {
        guard let hintsFile, t.memory.revision != savedHintsRevision.load(ordering: .relaxed) else { return }
        savedHintsRevision.store(t.memory.revision, ordering: .relaxed)
        hintsFile.save(t.memory.photos, revision: t.memory.revision)
    }

    private func view(_ t: ColourTable, _ i: Int) -> PhotoHintsView {
        let q = t.entries[i].lastQuad
        return PhotoHintsView(
            photo: t.entries[i].trackID, inView: t.entries[i].lastSeenFrame == t.frame,
            corners: [q.corners.0, q.corners.1, q.corners.2, q.corners.3], hints: t.hints(entry: i))
    }

    /// `place` in the photo's own coordinates (fractions of the model input).
    private func point(_ place: HintPlace, photo: Int, entry: ColourEntry, frame: Int) throws(HintEditError)
        -> (Float, Float)
    {
        switch place {
        case .photo(let u, let v):
            return (Float(u), Float(v))
        case .frame(let x, let y):
            guard entry.lastSeenFrame == frame else { throw .notInView(photo) }
            guard let p = PhotoHints.photoPoint(PixelPoint(x, y), in: entry.lastQuad, sizePx: inputSizePx) else {
                throw .outsidePhoto(photo: photo, xPx: x, yPx: y)
            }
            return p
        }
    }
}
