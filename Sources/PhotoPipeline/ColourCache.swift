import ColorcamCore
import Detect
import Infer

/// One photo's latest colours (and, when photos are saved, its best colorization so far), keyed by track id.
///
/// Storage is allocated once per entry (at `ColourTable.init`, or lazily for the `best` copies) and reused when the
/// entry passes to another track. Guarded by `PhotoColorProcessor`'s lock; never touched outside it.
struct ColourEntry: @unchecked Sendable {
    // Invariant for @unchecked Sendable: only touched under the processor's lock.
    /// -1: free.
    var trackID = -1
    var hasColour = false
    /// Model output (a plane, b plane) as the model gave it (not yet × output scale).
    let ab: UnsafeMutablePointer<Float>
    /// Luma thumbnail (and outline contrast) of the view the colours were computed from (`FrameSampler.thumbnail`).
    let thumbnail: UnsafeMutablePointer<Float>
    var resultFrame = -1
    var resultCaptureTsNs: Int64 = 0
    /// The model's output scale for `ab`.
    var abScale: Float = 1
    var modelGeneration = 0
    /// How much of the print something covered in the view the colours were computed from
    /// (`CoverMask.measure`).
    var coveredFraction = 0.0
    /// The last frame whose analysis showed this track (for eviction).
    var lastSeenFrame = -1
    var firstSeenFrame = -1
    /// Best colorization for --save-photos: the input L (raw L*, N×N), its ab, where and when.
    var best: SavedColour?
    /// Colour hints given on this photo, in its rectified (model input) coordinates: `hintCount` of
    /// `PhotoHints.maxPerPhoto`, oldest first.
    let hints: UnsafeMutablePointer<PhotoHint>
    var hintCount = 0
    /// Its record in the table's `HintMemory` (nil: none).
    var rememberedID: Int?
    /// Whether the memory was searched for this photo (once, at its first view with a thumbnail).
    var recallTried = false
    /// Its corners in the last frame that showed it (`lastSeenFrame`).
    var lastQuad = Quad(.zero, .zero, .zero, .zero)
    /// The model's most likely ab bins per cell of its distribution for the colours it has (`ABSuggestions.keep`;
    /// nil when the model has no distribution), valid when `hasSuggestions`.
    let suggestionBins: UnsafeMutablePointer<UInt16>?
    let suggestionProbabilities: UnsafeMutablePointer<Float>?
    var hasSuggestions = false
    /// Bumped by every hint; the colours follow the hints of `resultHintGeneration`.
    var hintGeneration = 0
    var resultHintGeneration = 0
    /// The quarter turns its colours were computed at (`UprightTurner`; 0: as fed), for its model generation.
    var uprightTurns = 0
}

/// A colorization worth saving: owns copies of its planes (allocated when the entry first beats nothing).
final class SavedColour: @unchecked Sendable {
    // Invariant for @unchecked Sendable: mutated under the processor's lock, or owned by the saver once handed off.
    let lightness: UnsafeMutablePointer<Float>
    let ab: UnsafeMutablePointer<Float>
    let inputSizePx: Int
    let abWidthPx: Int, abHeightPx: Int
    var quality: Double = -1
    /// What covered the print in the saved view (`CoverMask.measure`).
    var coveredFraction = 0.0
    /// True when this best has not been handed to the saver since it last improved.
    var unsaved = false
    var quad = Quad(.zero, .zero, .zero, .zero)
    var frame = -1
    var trackID = -1
    var firstFrame = -1
    var lastFrame = -1
    var modelName = ""
    var abScale: Float = 1
    /// The hint generation (`ColourEntry.hintGeneration`) its colours follow: a view with newer hints replaces it.
    var hintGeneration = 0
    /// The quarter turns (counterclockwise) the view was coloured at to be upright (`UprightTurner`; 0: as fed).
    var uprightTurns = 0

    init(inputSizePx: Int, abWidthPx: Int, abHeightPx: Int) {
        self.inputSizePx = inputSizePx
        self.abWidthPx = abWidthPx
        self.abHeightPx = abHeightPx
        lightness = .allocate(capacity: inputSizePx * inputSizePx)
        ab = .allocate(capacity: 2 * abWidthPx * abHeightPx)
    }

    /// A copy (for handing to the saver while the entry keeps updating).
    func copy() -> SavedColour {
        let c = SavedColour(inputSizePx: inputSizePx, abWidthPx: abWidthPx, abHeightPx: abHeightPx)
        c.lightness.update(from: lightness, count: inputSizePx * inputSizePx)
        c.ab.update(from: ab, count: 2 * abWidthPx * abHeightPx)
        c.quality = quality; c.coveredFraction = coveredFraction; c.quad = quad; c.frame = frame; c.trackID = trackID
        c.firstFrame = firstFrame; c.lastFrame = lastFrame; c.modelName = modelName; c.abScale = abScale
        c.hintGeneration = hintGeneration; c.uprightTurns = uprightTurns
        return c
    }

    deinit {
        lightness.deallocate()
        ab.deallocate()
    }
}

/// A fixed table of `ColourEntry`s. Not thread-safe by itself: lives inside the processor's Mutex.
struct ColourTable: @unchecked Sendable {
    var entries: [ColourEntry]
    let abCount: Int
    /// Every photo's hints by content (`HintMemory`).
    var memory = HintMemory()
    /// The last frame analysed (photos with `lastSeenFrame` equal to it are in view).
    var frame = -1
    /// Hint ids are unique across photos for the run.
    var nextHintID = 1

    /// `suggestionCount`: kept bins per entry (cells × `ABSuggestions.keptPerCell`; 0: the model has no distribution).
    init(capacity: Int, abCount: Int, suggestionCount: Int = 0) {
        self.abCount = abCount
        let thumbCount = FrameSampler.thumbnailCount
        entries = (0..<capacity).map { _ in
            let ab = UnsafeMutablePointer<Float>.allocate(capacity: abCount)
            ab.initialize(repeating: 0, count: abCount)
            let thumbnail = UnsafeMutablePointer<Float>.allocate(capacity: thumbCount)
            thumbnail.initialize(repeating: 0, count: thumbCount)
            let hints = UnsafeMutablePointer<PhotoHint>.allocate(capacity: PhotoHints.maxPerPhoto)
            let bins = suggestionCount > 0 ? UnsafeMutablePointer<UInt16>.allocate(capacity: suggestionCount) : nil
            let probabilities =
                suggestionCount > 0 ? UnsafeMutablePointer<Float>.allocate(capacity: suggestionCount) : nil
            return ColourEntry(
                ab: ab, thumbnail: thumbnail, hints: hints, suggestionBins: bins, suggestionProbabilities: probabilities
            )
        }
    }

    func deallocate() {
        for e in entries {
            e.ab.deallocate()
            e.thumbnail.deallocate()
            e.hints.deallocate()
            e.suggestionBins?.deallocate()
            e.suggestionProbabilities?.deallocate()
        }
    }

    func index(of trackID: Int) -> Int? {
        for i in entries.indices where entries[i].trackID == trackID { return i }
        return nil
    }

    /// The entry for `trackID`, claiming a free one or the least recently seen one not seen since
    /// `evictBefore` (its saved colour, if any, is returned for saving). Nil when every entry is in recent use.
    mutating func claim(_ trackID: Int, frame: Int, evictBefore: Int) -> (index: Int, evicted: SavedColour?)? {
        if let i = index(of: trackID) { return (i, nil) }
        var pick: Int? = nil
        for i in entries.indices {
            if entries[i].trackID < 0 { pick = i; break }
            if entries[i].lastSeenFrame < evictBefore,
                pick.map({ entries[i].lastSeenFrame < entries[$0].lastSeenFrame }) ?? true
            {
                pick = i
            }
        }
        guard let i = pick else { return nil }
        let evicted = entries[i].trackID >= 0 ? entries[i].best : nil
        entries[i].trackID = trackID
        entries[i].hasColour = false
        entries[i].coveredFraction = 0
        entries[i].resultFrame = -1
        entries[i].lastSeenFrame = frame
        entries[i].firstSeenFrame = frame
        entries[i].best = nil
        entries[i].hintCount = 0
        entries[i].hasSuggestions = false
        entries[i].rememberedID = nil
        entries[i].recallTried = false
        entries[i].hintGeneration = 0
        entries[i].resultHintGeneration = 0
        entries[i].uprightTurns = 0
        return (i, evicted)
    }
}
