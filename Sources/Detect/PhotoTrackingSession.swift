import ColorcamCore

/// Detection plus tracking for one stream, with the full search run at a lower rate: every
/// `fullDetectionInterval`-th frame (and whenever nothing is tracked) `PhotoDetector.detect` searches the whole
/// frame; in between, each track is re-found from its predicted corners with `PhotoDetector.refine` (the
/// full-resolution edge search only), which is what keeps the per-frame cost low. New photos therefore appear within
/// `fullDetectionInterval` frames plus the tracker's appear hysteresis.
///
/// Before that, each live track's photo motion since the last frame is measured from the photo's own picture
/// (`PhotoMotionEstimator`, one per track, on a luma pyramid built once per frame) and applied to the track, so
/// the tracker averages a still print's corners over many frames instead of following its outline's noise.
///
/// Ownership and threading: owns its detector, tracker and motion estimators; one thread at a time (the capture
/// thread), frames in timestamp order. The returned array shares storage with the tracker (copy to keep).
/// Allocation-free after warm-up except when a track is born (its filter state and motion estimator).
public final class PhotoTrackingSession {
    public let detector: PhotoDetector
    public let tracker: PhotoTracker
    /// Measure each track's photo motion from its picture and apply it (see the type's comment); false = the
    /// tracker alone (a diagnostic: `colorcam detect --no-photo-motion`).
    public var measuresPhotoMotion = true
    public let motionParameters: PhotoMotionParameters
    private let pyramid: LumaPyramid
    /// One estimator per live track, by the track's serial (`PhotoTracker.liveTrackSerials`).
    private var motionEstimators: [(serial: Int, estimator: PhotoMotionEstimator)] = []
    /// Whether `pyramid` holds the current frame.
    private var pyramidLoaded = false
    private var serials: [Int] = []
    /// 1 = full detection on every frame.
    public var fullDetectionInterval: Int
    private var frameIndex = 0
    private var predicted: [Quad] = []
    private var observations: [Observation] = []
    private var provisional: [Bool] = []
    /// Per re-found observation, the track (index in `predicted`) it came from and the number of far smaller,
    /// clearly better supported full-search outlines whose centres it holds (`mergedOutlineConfidenceMargin`);
    /// and those outlines, with the re-found observation's index.
    private var refoundTrack: [Int] = []
    private var enclosedPhotos: [Int] = []
    private var enclosedFound: [(observation: Observation, refound: Int)] = []
    /// Corrections the last full search proposed but did not make (awaiting a second, agreeing search), and this
    /// search's. (`proposals` is internal, not private, so tests can set what the last search proposed.)
    var proposals: [Proposal] = []
    private var nextProposals: [Proposal] = []
    /// A full search's outline that would correct a track's re-found one, with the track's serial: until the next
    /// search it moves with the photo's measured motion, as the track does (`measurePhotoMotion`), so the next
    /// search's outline is compared with it where the photo is then (camera or print moved in between).
    struct Proposal {
        var found: Quad
        var serial: Int
    }
    /// A full search's outline replaces a re-found track's when their corners differ by more than this fraction of
    /// the photo's size (mean corner distance over the square root of the area): smaller differences are the
    /// search's own scatter, which would only add jitter. At 0.06 a still print's first outline 2.6 px off (75 px
    /// across: 3.5 %) stayed so while every search found the paper's edge; at 0.03 static prints of the
    /// training-split motion clips are placed within 1.5 px on 83.1 % of frames (79.9 %), the tracking benchmark
    /// unchanged; at 0.025 and below, searches' scatter moves outlines already placed. Still under it: one side
    /// 7 px in on a 120-px print (2.8 %; `tools/profile/results/motion-v3-disagreement.txt`).
    public var disagreementFraction = 0.03
    /// A full search's outline never replaces a re-found one whose area differs by more than this factor (a white
    /// border adds up to about 1.4).
    public var maximumAreaChange = 1.45
    /// Two full searches propose the same correction when their outlines' mean corner distance is below this
    /// fraction of the photo's size, the earlier one moved with the photo in between (`Proposal`).
    public var confirmFraction = 0.03
    /// How much more confident (support fraction) an outline lying inside a re-found one must be to replace it.
    public var insideConfidenceMargin = 0.05
    /// A re-found outline with a guessed side yields to a full search's outline within this fraction of its size —
    /// unless that outline is less rectangular by more than `provisionalShapeToleranceDegrees` (largest corner
    /// angle's deviation from 90°), and, on a track whose photo motion was measured, only once two searches agree.
    public var provisionalReplaceFraction = 0.1
    public var provisionalShapeToleranceDegrees = 2.0
    /// A larger outline beyond `maximumAreaChange` replaces a re-found one when it encloses it and is as well
    /// supported (any size: the whole print around a detail of it), or, up to this factor, when it is better
    /// supported by `recoveryConfidenceMargin`.
    public var maximumRecoveryAreaChange = 2.5
    public var recoveryConfidenceMargin = 0.1
    /// A re-found outline holding the centres of two or more full-search outlines, each far smaller (beyond
    /// `maximumAreaChange`) and better supported by this much, is several photos merged into one outline (with a
    /// stretch of table): its track is dropped and the photos are tracked on their own.
    public var mergedOutlineConfidenceMargin = 0.2
    /// On a track whose photo motion was not measured this frame (it follows its outlines), a correction this much
    /// better supported than the re-found outline is taken without a second search: nothing carries the first
    /// search's outline to where the photo is at the second (`Proposal`), so two searches of a photo sliding under
    /// a hand (motion lost) would never agree.
    public var immediateCorrectionMargin = 0.1

    /// `segmenter` and `detectorMode` go to the session's `PhotoDetector` (see its init), which owns the segmenter.
    public init(
        geometry: FrameGeometry, parameters: DetectorParameters = DetectorParameters(),
        trackerParameters: TrackerParameters = TrackerParameters(),
        motionParameters: PhotoMotionParameters = PhotoMotionParameters(), fullDetectionInterval: Int = 3,
        segmenter: PrintSegmenter? = nil, detectorMode: DetectorMode? = nil
    ) {
        precondition(fullDetectionInterval >= 1, "fullDetectionInterval must be at least 1")
        detector = PhotoDetector(geometry: geometry, parameters: parameters, segmenter: segmenter, mode: detectorMode)
        tracker = PhotoTracker(parameters: trackerParameters)
        self.motionParameters = motionParameters
        pyramid = LumaPyramid(geometry: geometry)
        motionEstimators.reserveCapacity(32)
        serials.reserveCapacity(32)
        self.fullDetectionInterval = fullDetectionInterval
        predicted.reserveCapacity(32)
        observations.reserveCapacity(32)
        provisional.reserveCapacity(32)
        refoundTrack.reserveCapacity(32)
        enclosedPhotos.reserveCapacity(32)
        enclosedFound.reserveCapacity(32)
        proposals.reserveCapacity(32)
        nextProposals.reserveCapacity(32)
    }

    /// Processes one frame: returns the shown tracks.
    ///
    /// Every track is first re-found from its own predicted corners (so it keeps following the outline it follows:
    /// a white border's paper edge, not the picture inside it). On full-search frames each detector observation
    /// that overlaps a re-found track may correct it (see `judge`); the others are new photos. A correction moves
    /// the track at once and is not taken as motion (`PhotoTracker.update(_:corrected:timestampNs:)`).
    /// - Parameter timestampNs: the frame's capture time on a monotonic clock (must not decrease).
    public func process(_ frame: FrameBuffer, timestampNs: Int64) -> [Track] {
        defer { frameIndex += 1 }
        tracker.liveTrackSerials(into: &serials)
        if measuresPhotoMotion { measurePhotoMotion(frame) }
        tracker.predictedQuads(into: &predicted)
        observations.removeAll(keepingCapacity: true)
        provisional.removeAll(keepingCapacity: true)
        refoundTrack.removeAll(keepingCapacity: true)
        for (t, quad) in predicted.enumerated() {
            if let o = detector.refine(quad, in: frame) {
                observations.append(o)
                provisional.append(detector.lastRefineWasProvisional)
                refoundTrack.append(t)
            }
        }
        var corrected: UInt64 = 0, placed: UInt64 = 0
        if predicted.isEmpty || frameIndex % fullDetectionInterval == 0 {
            let refoundCount = observations.count
            enclosedPhotos.removeAll(keepingCapacity: true)
            enclosedPhotos.append(contentsOf: repeatElement(0, count: refoundCount))
            enclosedFound.removeAll(keepingCapacity: true)
            for found in detector.detect(frame) {
                var same = -1
                for k in 0..<refoundCount
                where observations[k].quad.contains(found.quad.centroid)
                    || found.quad.contains(observations[k].quad.centroid)
                {
                    same = k
                    break
                }
                if same < 0 {
                    // A photo no re-find followed (new, or lost by its track's re-find this frame).
                    if observations.count < 64 { placed |= 1 << UInt64(observations.count) }
                    observations.append(found)
                    continue
                }
                // A photo partly out of view: the search sees only its visible part, the track knows the rest.
                if observations[same].outOfViewSides != 0 { continue }
                let refound = observations[same]
                if found.quad.area * maximumAreaChange < refound.quad.area
                    && found.confidence >= refound.confidence + mergedOutlineConfidenceMargin
                {
                    enclosedPhotos[same] += 1
                    enclosedFound.append((found, same))
                    continue
                }
                let track = refoundTrack[same]
                let judgement = judge(
                    found, against: refound, provisional: provisional[same],
                    motionApplied: tracker.isMotionApplied(at: track), serial: serials[track], in: frame)
                switch judgement {
                case .keep:
                    continue
                case .propose:
                    nextProposals.append(Proposal(found: found.quad, serial: serials[track]))
                case .measure, .replace:
                    // `measure`: this frame's observation, smoothed like a re-find; `replace`: re-places the track.
                    observations[same] = found
                    provisional[same] = false
                    if judgement == .replace && same < 64 { corrected |= 1 << UInt64(same) }
                }
            }
            swap(&proposals, &nextProposals)
            nextProposals.removeAll(keepingCapacity: true)
            // Merged outlines: their tracks go, the photos inside are placed (last first: indices stay valid).
            for k in stride(from: refoundCount - 1, through: 0, by: -1) where enclosedPhotos[k] >= 2 {
                tracker.forgetTrack(at: refoundTrack[k])
                observations.remove(at: k)
                corrected = PhotoTrackingSession.removingBit(k, from: corrected)
                placed = PhotoTrackingSession.removingBit(k, from: placed)
                for item in enclosedFound where item.refound == k {
                    if observations.count < 64 { placed |= 1 << UInt64(observations.count) }
                    observations.append(item.observation)
                }
            }
        }
        let tracks = tracker.update(observations, corrected: corrected, placed: placed, timestampNs: timestampNs)
        if measuresPhotoMotion { keyPhotoMotion(frame) }
        return tracks
    }

    /// Gives each live track without a motion estimator (one born this frame) its estimator, keyed on this frame
    /// with the outline the search found (after this frame's observations). Keyed on the next frame instead, with
    /// this frame's outline, a print sliding 12 px per frame was partly table in its key: the registration held to
    /// the table, and each new track of the print stayed behind on the table, painted (training motion clip 131,
    /// frames 79-88).
    private func keyPhotoMotion(_ frame: FrameBuffer) {
        tracker.liveTrackSerials(into: &serials)
        for (t, serial) in serials.enumerated() {
            guard !motionEstimators.contains(where: { $0.serial == serial }) else { continue }
            if !pyramidLoaded {
                pyramid.load(frame)
                pyramidLoaded = true
            }
            let estimator = PhotoMotionEstimator(parameters: motionParameters)
            estimator.makeKey(pyramid, region: tracker.smoothedQuad(at: t))
            motionEstimators.append((serial, estimator))
        }
    }

    /// Measures each live track's photo motion since the last frame and applies it to the track and to the
    /// corrections proposed for it (`proposals`). Estimators of tracks that ended are dropped. Estimators are made
    /// only by `keyPhotoMotion`, at the end of the frame a track is born (or, for a track born while photo motion was
    /// off, of the first frame with it on), so a track's motion is measured from the next frame on. The pyramid is
    /// built only when a track is live. `serials` must be the live tracks' (`process` fills it).
    private func measurePhotoMotion(_ frame: FrameBuffer) {
        pyramidLoaded = false
        motionEstimators.removeAll { entry in !serials.contains(entry.serial) }
        guard !serials.isEmpty else { return }
        pyramid.load(frame)
        pyramidLoaded = true
        for (t, serial) in serials.enumerated() {
            guard let estimator = motionEstimators.first(where: { $0.serial == serial })?.estimator else { continue }
            if let motion = estimator.estimate(pyramid, region: tracker.smoothedQuad(at: t)) {
                tracker.applyMotion(motion, toTrackAt: t)
                for k in proposals.indices where proposals[k].serial == serial {
                    if let moved = proposals[k].found.mapped(by: motion) { proposals[k].found = moved }
                }
            }
        }
    }

    /// `mask` with bit `k` removed and the bits above it moved down one (observation `k` was removed).
    static func removingBit(_ k: Int, from mask: UInt64) -> UInt64 {
        guard k < 64 else { return mask }
        let below = k == 0 ? 0 : mask & ((1 << UInt64(k)) - 1)
        return below | ((mask >> UInt64(k + 1)) << UInt64(k))
    }

    /// `keep`: the re-found outline stands. `propose`: it stands, and the found outline waits for the next full
    /// search to agree. `measure`: the found outline is this frame's observation of the track and goes through the
    /// tracker's smoothing like a re-find (averaged on a still print, `TrackerParameters.stillGatePx`). `replace`: the
    /// found outline re-places the track at once (`PhotoTracker.update`'s `corrected`).
    enum Judgement { case keep, propose, measure, replace }

    /// Whether a full search's outline `found` corrects the re-found outline of the same photo (which may have slid
    /// onto another edge).
    ///
    /// - An outline far larger or smaller (beyond `maximumAreaChange`) is another shape (the photo merged with the
    ///   table, a detail inside it) — except a larger one that encloses the re-found outline as well supported
    ///   (however much larger), or is clearly better supported: the whole print found again after the track kept
    ///   to a part of it.
    /// - A re-found outline with a guessed side (`provisional`) yields to a near, as well supported outline that
    ///   keeps the photo's shape about as rectangular. When the track's motion was measured (`motionApplied`: it
    ///   averages a still print's corners, and a jump is jitter) only after a second search agrees, and then as a
    ///   measurement (`measure`), not a re-placement: near outlines are averaged in, and the re-find searches from
    ///   there next frame.
    /// - A measured one yields when the two disagree by more than `disagreementFraction` (less is the search's own
    ///   scatter) and the found one is as well supported — clearly better when it lies inside (a picture's edge
    ///   inside its border is as straight as the paper's), and never the picture inside the white border the
    ///   track follows — and only when the previous full search proposed the same outline (one search alone may
    ///   have taken a shadow's or a picture's edge); the earlier outline has moved with the photo since
    ///   (`Proposal`), so a moving photo or camera is corrected as soon as a still one. A track whose motion was not
    ///   measured also takes an outline better supported by `immediateCorrectionMargin` at once; one whose motion
    ///   was measured waits for agreement however much better supported one search's outline is: on a print whose
    ///   edge the frame does not show, single searches outline it differently each time, some far better supported
    ///   than the track's (benchmark seed 12's dark print with detect model v6: three such searches moved the
    ///   still print's outline 11 px between equally wrong outlines).
    func judge(
        _ found: Observation, against refound: Observation, provisional: Bool, motionApplied: Bool, serial: Int,
        in frame: FrameBuffer
    ) -> Judgement {
        let sizePx = refound.quad.area.squareRoot()
        var distancePx = Double.infinity
        for shift in 0..<4 {
            distancePx = min(distancePx, refound.quad.meanCornerDistance(to: found.quad, shift: shift))
        }
        let areaRatio = found.quad.area / max(1e-9, refound.quad.area)
        let recovers =
            areaRatio > 1
            && ((areaRatio <= maximumRecoveryAreaChange
                && found.confidence >= refound.confidence + recoveryConfidenceMargin)
                || (found.confidence >= refound.confidence && found.quad.encloses(refound.quad, tolerancePx: 2)))
        guard areaRatio >= 1 / maximumAreaChange, areaRatio <= maximumAreaChange || recovers else { return .keep }
        if provisional && found.confidence >= refound.confidence && distancePx <= provisionalReplaceFraction * sizePx {
            // Not when it bends the photo's shape: the guessed side is the whole outline's, and a search that found
            // no better edge for it than the re-find did takes a shadow or a line in the picture (benchmark seed
            // 12: a dark print's bottom on a dark table, taken at 80° and 100°, again and again).
            if found.quad.maxRightAngleDeviationDegrees
                > refound.quad.maxRightAngleDeviationDegrees + provisionalShapeToleranceDegrees
            {
                return .keep
            }
            // A track averaging a still print's corners (its motion measured) takes it only when two searches
            // agree, and averages it in: taken at once, such a correction moved a corner of benchmark seed 12's
            // dark print 3.5 px at frame 249, to an outline no nearer the truth than the one it left.
            guard motionApplied else { return .replace }
            return isConfirmed(found.quad, serial: serial, sizePx: sizePx) ? .measure : .propose
        }
        let inside = areaRatio < 1 && refound.quad.encloses(found.quad, tolerancePx: 2)
        guard distancePx > disagreementFraction * sizePx,
            found.confidence >= refound.confidence + (inside ? insideConfidenceMargin : 0),
            !detector.isPictureInsideBorder(found.quad, of: refound.quad, in: frame)
        else { return .keep }
        if !motionApplied && found.confidence >= refound.confidence + immediateCorrectionMargin { return .replace }
        return isConfirmed(found.quad, serial: serial, sizePx: sizePx) ? .replace : .propose
    }

    /// Whether the previous full search proposed about the same outline (`confirmFraction`) for track `serial`.
    private func isConfirmed(_ quad: Quad, serial: Int, sizePx: Double) -> Bool {
        proposals.contains { $0.serial == serial && $0.found.meanCornerDistance(to: quad) <= confirmFraction * sizePx }
    }
}
