import ColorcamCore
import Detect
import Infer
import Stream
import Synchronization

/// The product's frame processor: detects and tracks photos on the capture thread, colorizes one photo at a time
/// in rectified space on the inference thread (new photos first, then the one whose colours are stalest among
/// those whose content changed), caches each photo's ab by track, and on the output thread writes every photo's
/// cached colours into the frame through that frame's own corners, keeping the frame's live L*.
///
/// Threading (see `FrameProcessor`): `analyse`/`prepareInference` on the capture thread, `infer` on an inference
/// thread, `composite` on the output thread; the colour table is shared under `table`'s lock (held while one photo
/// is composited, so a finishing inference waits at most that long to publish). `reload` and `finish` are
/// control-plane calls. Nothing is allocated per frame after warm-up (tracks being born and photos being saved
/// allocate).
public final class PhotoColorProcessor: FrameProcessor, @unchecked Sendable {
    // Invariant for @unchecked Sendable: per-frame analysis storage is indexed by pool index and handed between the
    // capture and output threads by the pipeline's queue; input slots are owned by one job at a time (the
    // scheduler's contract); `session`, `thumbs` and the cover scratch are used by the capture stage only.
    public let options: PhotoPipelineOptions
    public let geometry: FrameGeometry
    let models: ModelHolder
    let codec: PixelCodec
    let session: PhotoTrackingSession
    let inputSizePx: Int
    let abWidthPx: Int, abHeightPx: Int
    let table: Locked<ColourTable>
    let saver: PhotoSaver?

    // Per pool index: photos in view (ids, corners).
    private var poolSize = 0
    private var photoCounts: UnsafeMutablePointer<Int>?
    private var photoIDs: UnsafeMutablePointer<Int>?
    private var photoQuads: UnsafeMutablePointer<Quad>?
    private var photoWhole: UnsafeMutablePointer<Bool>?
    // Per input slot.
    private var slotCount = 0
    private var slotInputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>?
    private var slotOutputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>?
    private var slotThumbs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>?
    private var slotJobs: UnsafeMutablePointer<SlotJob>?
    // Capture-thread scratch: a thumbnail per photo in view; which tracks are painted.
    private let thumbs: UnsafeMutablePointer<Float>
    /// Capture-thread scratch for `CoverMask.measure`.
    private let coverScratch: UnsafeMutablePointer<Int32>
    /// Per pool frame and photo in view (like `photoQuads`): what covers it (`CoverMask`), fraction and mask.
    private var photoCover: UnsafeMutablePointer<Double>?
    private var photoCoverMask: UnsafeMutablePointer<UInt64>?
    /// A photo at least this covered keeps its live colour where the mask says (below it, what the mask finds is
    /// noise or glare, and every cell is painted).
    static let coverGate = 0.03
    /// How much less covered a print must be than in the view its colours came from to be colorized again (the hand
    /// that lay on it has gone: the colours under it were the hand's, and the clear view is the keepsake).
    static let uncoveredChange = 0.02
    private var gate: PaintGate
    // Output-thread scratch: the frame's chroma before compositing.
    private let originalCb: UnsafeMutablePointer<UInt8>
    private let originalCr: UnsafeMutablePointer<UInt8>

    struct SlotJob {
        var trackID = -1
        var quad = Quad(.zero, .zero, .zero, .zero)
        /// How good a keepsake the view is: its area (px²), less for what covers it.
        var quality = 0.0
        /// `CoverMask.measure` of the view.
        var coveredFraction = 0.0
        /// How the print's outline changed since the view its colours came from (`outlineChange`): `regained` (and
        /// nothing measurable covering it now) — what covered it unmeasured has gone, so this view replaces the
        /// keepsake whatever the qualities say; `lost` — something has come over it, so it replaces none. A hand can
        /// make an outline, and so its area, larger; what the cover mask measures, the quality already counts.
        var outline = OutlineChange.none
        /// The quarter turns that make the print upright, decided at its first colorization with this model; nil:
        /// not yet (`UprightTurner`).
        var uprightTurns: Int?
    }

    /// Colour hints on the photos (`addHint`, the `+Hints` API).
    let hints = PhotoHints()
    /// Cells of the model's ab distribution (0: none); per input slot, the last run's kept bins (`ABSuggestions`).
    let suggestionCells: Int
    private var slotSuggestionBins: UnsafeMutablePointer<UInt16>?
    private var slotSuggestionProbabilities: UnsafeMutablePointer<Float>?
    /// Which way is up on a print (the inference thread's).
    let upright: UprightTurner
    /// Where the hints are kept across restarts; the memory revision last handed to it (under the table lock).
    let hintsFile: HintsFile?
    let savedHintsRevision = Atomic<Int>(0)

    public var isSimulated: Bool { false }
    public var label: String {
        guard options.remote != nil else { return models.bundle.name }
        return "\(models.bundle.name) via \(options.remoteLabel)"
            + (options.remoteFallbackLocal ? " (fallback local)" : "")
    }

    /// Loads the model (and the detect model, when the detector mode uses it) and prepares detection for frames of
    /// `geometry`. Throws a one-line error for a model that is not a colorizer, a detect model that is not a print
    /// segmenter (naming its file) or a bad `savePhotosDirectory`.
    /// - Precondition: `options.effectiveDetectorMode` is `classic` or `options.detectModel` is set.
    public init(bundle: ModelBundle, geometry: FrameGeometry, options: PhotoPipelineOptions = PhotoPipelineOptions())
        throws
    {
        precondition((1...64).contains(options.maxPhotos), "maxPhotos must be 1…64")
        let mode = options.effectiveDetectorMode
        precondition(mode == .classic || options.detectModel != nil, "detector mode \(mode) needs a detect model")
        self.options = options
        self.geometry = geometry
        models = try ModelHolder(bundle: bundle)
        codec = PixelCodec(encoding: options.encoding)
        let segmenter = try options.detectModel.flatMap { model in
            mode.usesSegmenter ? try CNNPrintSegmenter(model: model, geometry: geometry) : nil
        }
        session = PhotoTrackingSession(
            geometry: geometry, parameters: options.detector,
            fullDetectionInterval: options.fullDetectionInterval, segmenter: segmenter,
            detectorMode: mode)
        inputSizePx = bundle.inputSizePx
        abHeightPx = models.outputShape[2]
        abWidthPx = models.outputShape[3]
        suggestionCells =
            options.keepsColourSuggestions ? bundle.distribution.map { $0.shape[2] * $0.shape[3] } ?? 0 : 0
        var colours = ColourTable(
            capacity: 16, abCount: 2 * abWidthPx * abHeightPx,
            suggestionCount: suggestionCells * ABSuggestions.keptPerCell)
        do {
            colours.memory = HintMemory(photos: try options.hintsFile?.load() ?? [])
        } catch {
            colours.deallocate()
            throw error
        }
        table = Locked(colours)
        upright = UprightTurner(
            inputSizePx: inputSizePx, abWidthPx: abWidthPx, abHeightPx: abHeightPx, maxHints: PhotoHints.maxPerPhoto,
            keptSuggestions: suggestionCells * ABSuggestions.keptPerCell)
        hintsFile = options.hintsFile
        saver = try options.savePhotosDirectory.map { try PhotoSaver(directory: $0) }
        thumbs = .allocate(capacity: options.maxPhotos * FrameSampler.thumbnailCount)
        coverScratch = .allocate(capacity: CoverMask.scratchCount)
        gate = PaintGate(geometry: geometry, maxSpeedPx: options.maxPaintSpeedPx)
        originalCb = .allocate(capacity: max(1, geometry.chromaPlaneBytes))
        originalCr = .allocate(capacity: max(1, geometry.chromaPlaneBytes))
    }

    deinit {
        table.withLock { $0.deallocate() }
        thumbs.deallocate()
        coverScratch.deallocate()
        photoCover?.deallocate(); photoCoverMask?.deallocate()
        originalCb.deallocate()
        originalCr.deallocate()
        photoCounts?.deallocate(); photoIDs?.deallocate(); photoQuads?.deallocate(); photoWhole?.deallocate()
        for i in 0..<slotCount {
            slotInputs?[i].deallocate(); slotOutputs?[i].deallocate(); slotThumbs?[i].deallocate()
        }
        slotInputs?.deallocate(); slotOutputs?.deallocate(); slotThumbs?.deallocate(); slotJobs?.deallocate()
        slotSuggestionBins?.deallocate(); slotSuggestionProbabilities?.deallocate()
    }

    public func prepare(framePoolSize: Int, inputSlotCount: Int) {
        precondition(photoCounts == nil, "prepare is called once")
        poolSize = framePoolSize
        photoCounts = .allocate(capacity: framePoolSize)
        photoCounts!.initialize(repeating: 0, count: framePoolSize)
        photoIDs = .allocate(capacity: framePoolSize * options.maxPhotos)
        photoQuads = .allocate(capacity: framePoolSize * options.maxPhotos)
        photoWhole = .allocate(capacity: framePoolSize * options.maxPhotos)
        photoCover = .allocate(capacity: framePoolSize * options.maxPhotos)
        photoCoverMask = .allocate(capacity: framePoolSize * options.maxPhotos * CoverMask.words)
        slotCount = inputSlotCount
        slotInputs = .allocate(capacity: inputSlotCount)
        slotOutputs = .allocate(capacity: inputSlotCount)
        slotThumbs = .allocate(capacity: inputSlotCount)
        slotJobs = .allocate(capacity: inputSlotCount)
        for i in 0..<inputSlotCount {
            slotInputs![i] = .allocate(capacity: inputSizePx * inputSizePx)
            slotOutputs![i] = .allocate(capacity: 2 * abWidthPx * abHeightPx)
            slotThumbs![i] = .allocate(capacity: FrameSampler.thumbnailCount)
            slotJobs![i] = SlotJob()
        }
        hints.prepare(slotCount: inputSlotCount)
        if suggestionCells > 0 {
            let n = inputSlotCount * suggestionCells * ABSuggestions.keptPerCell
            slotSuggestionBins = .allocate(capacity: n)
            slotSuggestionProbabilities = .allocate(capacity: n)
        }
    }

    // MARK: capture thread

    public func analyse(_ frame: FrameBuffer) -> Int? {
        let tracks = session.process(frame, timestampNs: frame.sceneTimestampNs)
        let base = frame.poolIndex * options.maxPhotos
        var count = 0
        // The photos `gate` paints, the largest first when there are more than maxPhotos.
        defer { gate.endFrame() }
        for track in tracks
        where gate.paints(track)
            && (count < options.maxPhotos || track.quad.area > photoQuads![base + count - 1].area)
        {
            var k = min(count, options.maxPhotos - 1)
            photoIDs![base + k] = track.id
            photoQuads![base + k] = track.quad
            photoWhole![base + k] = gate.isWhole(track.quad)
            while k > 0 && photoQuads![base + k].area > photoQuads![base + k - 1].area {
                swap(&photoIDs![base + k], &photoIDs![base + k - 1])
                swap(&photoQuads![base + k], &photoQuads![base + k - 1])
                swap(&photoWhole![base + k], &photoWhole![base + k - 1])
                k -= 1
            }
            count = min(count + 1, options.maxPhotos)
        }
        photoCounts![frame.poolIndex] = count
        let sampler = FrameSampler(frame)
        for k in 0..<count {
            photoCover![base + k] = CoverMask.measure(
                sampler, quad: photoQuads![base + k], scratch: coverScratch,
                mask: photoCoverMask! + (base + k) * CoverMask.words)
        }
        return tracks.count
    }

    public func prepareInference(_ frame: FrameBuffer, slot: Int, inferenceIdle: Bool) -> InferenceRequest? {
        let sequence = frame.sequence
        let count = photoCounts![frame.poolIndex]
        let base = frame.poolIndex * options.maxPhotos
        let side = FrameSampler.thumbnailSide
        let sampler = FrameSampler(frame)
        let generation = models.generation
        // Per photo in view: its thumbnail now, and whether its colours are missing or stale.
        var chosen = -1, chosenReason = InferenceReason.new, chosenStaleness = -1, chosenEntry = -1
        var chosenOutline = OutlineChange.none, chosenTurns: Int?
        // A remote server backing off after a failure takes no request (unless the local engine stands in).
        let serverAway = options.remote.map { !$0.acceptsRequests && !options.remoteFallbackLocal } ?? false
        let busy = serverAway || !inferenceIdle
        let saveBefore = sequence - 60
        var evicted: SavedColour?
        // Thumbnails only when a request can be made, and outside the lock (the output thread composites under it).
        var sampled: UInt64 = 0  // bit k: photo k's thumbnail is in `thumbs`
        let dueClicks = hints.takeDue(frame: sequence)
        if !busy {
            for k in 0..<count where photoWhole![base + k] {  // colours come from whole views only
                guard let map = Rectifier.homography(for: photoQuads![base + k], widthPx: side, heightPx: side)
                else { continue }
                sampler.thumbnail(through: map, into: thumbs + k * FrameSampler.thumbnailCount)
                sampled |= 1 << UInt64(k)
            }
        }
        table.withLock { t in
            t.frame = sequence
            for k in 0..<count {
                let id = photoIDs![base + k]
                guard let (i, old) = t.claim(id, frame: sequence, evictBefore: sequence - poolSize - 2) else {
                    continue
                }
                if let old, old.unsaved { evicted = old }
                t.entries[i].lastSeenFrame = sequence
                t.entries[i].lastQuad = photoQuads![base + k]
                guard sampled & (1 << UInt64(k)) != 0 else { continue }
                // A photo seen before (a new track id, or a restart with a hints file) gets its hints back.
                if !t.entries[i].hasColour {
                    _ = t.recallHints(entry: i, thumbnail: thumbs + k * FrameSampler.thumbnailCount)
                }
                let e = t.entries[i]
                let thumb = thumbs + k * FrameSampler.thumbnailCount, coverNow = photoCover![base + k]
                // What lay over the print when its colours were computed has gone: the mask measures less, or the
                // print changed in one place while nothing measurable covers it and its outline there is now the
                // clearer (a hand the mask cannot see — a pale hand on a sepia print has its tone — crosses the
                // print's edge, and is told by the print changing, and its edge coming back, when it goes).
                let outline =
                    e.hasColour
                    ? outlineChange(now: thumb, before: e.thumbnail, threshold: options.localChangeThreshold) : .none
                let regained = coverNow < Self.coverGate && outline == .regained
                let uncovered = e.hasColour && (e.coveredFraction - coverNow > Self.uncoveredChange || regained)
                let reason: InferenceReason, staleness: Int
                if !e.hasColour {
                    reason = .new; staleness = Int.max
                } else if e.hintGeneration != e.resultHintGeneration {
                    reason = .hint; staleness = sequence - e.resultFrame
                } else if uncovered || e.modelGeneration != generation
                    || thumbnailDistance(thumb, e.thumbnail) > options.changeThreshold
                {
                    reason = .changed; staleness = sequence - e.resultFrame
                } else {
                    continue
                }
                // New photos first, then hinted ones, then changed ones; among equals the stalest colours.
                let better =
                    chosen < 0 || Self.rank(reason) > Self.rank(chosenReason)
                    || (reason == chosenReason && staleness > chosenStaleness)
                if better {
                    chosen = k; chosenReason = reason; chosenStaleness = staleness; chosenEntry = i
                    chosenOutline = regained ? .regained : outline == .lost ? .lost : .none
                }
            }
            if chosen >= 0 {
                hints.load(slot: slot, from: t.entries[chosenEntry])
                let e = t.entries[chosenEntry]
                chosenTurns = e.hasColour && e.modelGeneration == generation ? e.uprightTurns : nil
            }
            hints.apply(
                dueClicks, ids: photoIDs! + base, quads: photoQuads! + base, count: count, sizePx: inputSizePx,
                table: &t, frame: sequence)
            saveHintsIfChanged(t)
            if saver != nil {
                for i in t.entries.indices where t.entries[i].lastSeenFrame < saveBefore {
                    if let best = t.entries[i].best, best.unsaved {
                        best.lastFrame = t.entries[i].lastSeenFrame
                        best.unsaved = false  // a better view later saves again (the saver keeps one file)
                        saver?.submit(best.copy())
                    }
                }
            }
        }
        if let evicted { saver?.submit(evicted) }
        guard chosen >= 0, !busy else { return nil }
        let quad = photoQuads![base + chosen]
        guard let map = Rectifier.homography(for: quad, widthPx: inputSizePx, heightPx: inputSizePx) else { return nil }
        let bundle = models.bundle
        sampler.rectifyLightness(
            through: map, sizePx: inputSizePx, scale: bundle.inputScale, offset: bundle.inputOffset,
            codec: codec, into: slotInputs![slot])
        slotThumbs![slot].update(
            from: thumbs + chosen * FrameSampler.thumbnailCount, count: FrameSampler.thumbnailCount)
        // A keepsake view is a large one with nothing over the print: a view half covered by a hand is worth far
        // less than the same print in full (and one a tenth covered still loses to any clear view of its size).
        let covered = photoCover![base + chosen]
        slotJobs![slot] = SlotJob(
            trackID: photoIDs![base + chosen], quad: quad, quality: quad.area * max(0, 1 - 3 * covered),
            coveredFraction: covered, outline: chosenOutline, uprightTurns: chosenTurns)
        return InferenceRequest(photo: photoIDs![base + chosen], reason: chosenReason)
    }

    // MARK: inference thread

    public func infer(slot: Int, frame: Int, captureTsNs: Int64) -> InferenceOutcome {
        guard let (engines, generation, bundle) = models.acquire() else {
            return InferenceOutcome(failure: .unavailable)
        }
        let engine = engines.colorizer
        let input = slotInputs![slot], output = slotOutputs![slot]
        let inputCount = inputSizePx * inputSizePx, abCount = 2 * abWidthPx * abHeightPx
        let inputBuffer = UnsafeBufferPointer(start: input, count: inputCount)
        let outputBuffer = UnsafeMutableBufferPointer(start: output, count: abCount)
        let job = slotJobs![slot], points = hints.points(slot: slot)
        let kept = suggestionCells * ABSuggestions.keptPerCell
        // The model's distribution is kept from the local engine's runs only, read before the engine goes back.
        let sink =
            kept > 0 && options.remote == nil
            ? bundle.distribution.map {
                SuggestionSink(
                    distribution: $0, cells: suggestionCells, bins: slotSuggestionBins! + slot * kept,
                    probabilities: slotSuggestionProbabilities! + slot * kept)
            } : nil
        // Which way is up is asked of the local orientation engine, once per track (a server colours the view
        // turned the same).
        let (turns, outcome, suggested) = upright.colour(
            view: inputBuffer, knownTurns: job.uprightTurns, hints: points, engine: engine,
            orientation: engines.orientation, bundle: bundle, remote: options.remote,
            fallbackLocal: options.remoteFallbackLocal, ab: outputBuffer, suggestions: sink)
        models.release(engines, generation: generation)
        guard outcome.gaveResult else { return outcome }  // colours keep their age
        HintPoint.stamp(
            hints.points(slot: slot), into: outputBuffer, widthPx: abWidthPx, heightPx: abHeightPx,
            inputSizePx: inputSizePx, scale: bundle.outputScale)
        table.withLock { t in
            guard let i = t.index(of: job.trackID) else { return }  // the track went and its entry was reused
            t.entries[i].ab.update(from: output, count: abCount)
            t.entries[i].thumbnail.update(from: slotThumbs![slot], count: FrameSampler.thumbnailCount)
            t.entries[i].hasColour = true
            t.entries[i].resultFrame = frame
            t.entries[i].resultCaptureTsNs = captureTsNs
            t.entries[i].modelGeneration = generation
            t.entries[i].coveredFraction = job.coveredFraction
            t.entries[i].abScale = bundle.outputScale
            t.entries[i].resultHintGeneration = hints.generation(slot: slot)
            t.entries[i].uprightTurns = turns
            if suggested, let bins = t.entries[i].suggestionBins,
                let probabilities = t.entries[i].suggestionProbabilities
            {
                bins.update(from: slotSuggestionBins! + slot * kept, count: kept)
                probabilities.update(from: slotSuggestionProbabilities! + slot * kept, count: kept)
            }
            t.entries[i].hasSuggestions = suggested
            t.signRemembered(entry: i)
            saveHintsIfChanged(t)
            guard saver != nil else { return }
            let best =
                t.entries[i].best ?? SavedColour(inputSizePx: inputSizePx, abWidthPx: abWidthPx, abHeightPx: abHeightPx)
            t.entries[i].best = best
            best.lastFrame = t.entries[i].lastSeenFrame
            best.firstFrame = t.entries[i].firstSeenFrame
            // A better view (unless something has come over the print), one with what covered it gone, another
            // model, or colours that follow newer hints (what the user asked for) replace it.
            let hintGeneration = hints.generation(slot: slot)
            guard
                (job.quality > best.quality && job.outline != .lost) || job.outline == .regained
                    || best.modelName != bundle.name
                    || hintGeneration > best.hintGeneration
            else { return }
            for p in 0..<inputCount { best.lightness[p] = (input[p] - bundle.inputOffset) / bundle.inputScale }
            best.ab.update(from: output, count: abCount)
            best.quality = job.quality; best.quad = job.quad; best.frame = frame; best.trackID = job.trackID
            best.coveredFraction = job.coveredFraction
            best.modelName = bundle.name; best.abScale = bundle.outputScale; best.unsaved = true
            best.hintGeneration = hintGeneration; best.uprightTurns = turns
        }
        return outcome
    }

    // MARK: output thread

    public func composite(_ frame: FrameBuffer, scheduled: CompositeStamp?) -> CompositeStamp? {
        let g = frame.geometry
        guard g.chroma.hasChroma else { return nil }
        let chromaBytes = g.chromaPlaneBytes
        originalCb.update(from: frame.cb.baseAddress!.assumingMemoryBound(to: UInt8.self), count: chromaBytes)
        originalCr.update(from: frame.cr.baseAddress!.assumingMemoryBound(to: UInt8.self), count: chromaBytes)
        if options.background == .gray {
            frame.cb.initializeMemory(as: UInt8.self, repeating: 128)
            frame.cr.initializeMemory(as: UInt8.self, repeating: 128)
        }
        let count = photoCounts![frame.poolIndex]
        let base = frame.poolIndex * options.maxPhotos
        var stamp: CompositeStamp?
        for k in 0..<count {
            let id = photoIDs![base + k], quad = photoQuads![base + k]
            let cover = photoCover![base + k] >= Self.coverGate ? photoCoverMask! + (base + k) * CoverMask.words : nil
            table.withLock { t in
                guard let i = t.index(of: id), t.entries[i].hasColour else { return }
                let e = t.entries[i]
                let grid = ColourCompositor.Grid(ab: e.ab, widthPx: abWidthPx, heightPx: abHeightPx, scale: e.abScale)
                ColourCompositor.composite(
                    grid, into: frame, at: quad, originalCb: originalCb, originalCr: originalCr,
                    codec: codec, featherPx: options.featherPx, cover: cover.map { UnsafePointer($0) })
                if stamp == nil || e.resultFrame < stamp!.resultFrame {
                    stamp = CompositeStamp(resultFrame: e.resultFrame, resultCaptureTsNs: e.resultCaptureTsNs)
                }
            }
        }
        return stamp
    }

    /// Calls `body` with the id and corners of each photo colour was composited for in `frame` (output thread,
    /// after `composite`, before the frame goes back to the pool: e.g. the preview's outlines).
    public func forEachPhoto(in frame: FrameBuffer, _ body: (Int, Quad) -> Void) {
        let base = frame.poolIndex * options.maxPhotos
        for k in 0..<photoCounts![frame.poolIndex] { body(photoIDs![base + k], photoQuads![base + k]) }
    }

    // MARK: control plane

    /// Which photo is colorized first when several wait: new ones, then hinted ones, then changed ones.
    static func rank(_ reason: InferenceReason) -> Int {
        switch reason {
        case .new: return 3
        case .hint: return 2
        case .changed: return 1
        case .frame: return 0
        }
    }

    /// Swaps in another model without stopping the stream; every photo is then re-colorized (reason `changed`).
    /// Throws (the running model stays) when `bundle` cannot be loaded or has other sizes.
    public func reload(_ bundle: ModelBundle) throws {
        try models.reload(bundle)
    }

    /// After the run: saves every photo's best colorization not yet saved, and waits for the writes.
    /// Throws the first write error.
    public func finish() throws {
        hintsFile?.flush()
        guard let saver else { return }
        table.withLock { t in
            for e in t.entries where e.trackID >= 0 {
                if let best = e.best, best.unsaved {
                    best.lastFrame = e.lastSeenFrame
                    best.unsaved = false
                    saver.submit(best.copy())
                }
            }
        }
        try saver.finish()
    }
}
