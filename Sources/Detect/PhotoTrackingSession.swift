import ColorcamCore

/// Detection plus tracking for one stream, with the full search run at a lower rate: every
/// `fullDetectionInterval`-th frame (and whenever nothing is tracked) `PhotoDetector.detect` searches the whole
/// frame; in between, each track is re-found from its predicted corners with `PhotoDetector.refine` (the
/// full-resolution edge search only), which is what keeps the per-frame cost low. New photos therefore appear within
/// `fullDetectionInterval` frames plus the tracker's appear hysteresis.
///
/// Ownership and threading: owns its detector and tracker; one thread at a time (the capture thread), frames in
/// timestamp order. The returned array shares storage with the tracker (copy to keep). Allocation-free after warm-up
/// except when a track is born.
public final class PhotoTrackingSession {
    public let detector: PhotoDetector
    public let tracker: PhotoTracker
    /// 1 = full detection on every frame.
    public var fullDetectionInterval: Int
    private var frameIndex = 0
    private var predicted: [Quad] = []
    private var observations: [Observation] = []
    private var provisional: [Bool] = []
    /// A full search's outline replaces a re-found track's when their corners differ by more than this fraction of
    /// the photo's size (mean corner distance over the square root of the area): smaller differences are the
    /// search's own scatter, which would only add jitter.
    public var disagreementFraction = 0.06
    /// A single full search's outline never replaces a re-found one whose area differs by more than this factor (a
    /// white border adds up to about 1.4): it may be another shape (the photo merged with the table, a detail inside
    /// it). The same outline found again by the next full search (see `proposals`) does replace it: a print
    /// that was partly outside the frame and came into view, followed so far by an outline inside its picture.
    public var maximumAreaChange = 1.45
    /// A full-search outline found at least as confidently as the re-found one, whose largest corner distance from it
    /// exceeds this (px) but whose mean stays within `disagreementFraction`, replaces it when the next full search
    /// proposes the same correction (every corner's offset within `repeatTolerancePx`).
    public var minimumCorrectionPx = 2.0
    public var repeatTolerancePx = 1.5
    /// Corrections the last full search proposed but did not make; `pendingNext` collects this search's, then the
    /// two swap.
    private var proposals: [Proposal] = []
    /// Test seam: when set, called instead of `detector.detect` for the full search (unit tests script a search's
    /// findings). Nil in use.
    package var fullSearchOverride: ((FrameBuffer) -> [Observation])?
    private var pendingNext: [Proposal] = []

    public init(geometry: FrameGeometry, parameters: DetectorParameters = DetectorParameters(),
                trackerParameters: TrackerParameters = TrackerParameters(), fullDetectionInterval: Int = 3) {
        precondition(fullDetectionInterval >= 1, "fullDetectionInterval must be at least 1")
        detector = PhotoDetector(geometry: geometry, parameters: parameters)
        tracker = PhotoTracker(parameters: trackerParameters)
        self.fullDetectionInterval = fullDetectionInterval
        predicted.reserveCapacity(32)
        observations.reserveCapacity(32)
        provisional.reserveCapacity(32)
        proposals.reserveCapacity(32)
        pendingNext.reserveCapacity(32)
    }

    /// Processes one frame: returns the shown tracks.
    ///
    /// Every track is first re-found from its own predicted corners (so it keeps following the outline it follows:
    /// a white border's paper edge, not the picture inside it). On full-search frames the detector's observations
    /// that overlap a re-found track are dropped, except a clearly larger outline enclosing it (the paper's edge
    /// found where the track followed the picture's); the others are new photos.
    /// - Parameter timestampNs: the frame's capture time on a monotonic clock (must not decrease).
    public func process(_ frame: FrameBuffer, timestampNs: Int64) -> [Track] {
        defer { frameIndex += 1 }
        tracker.predictedQuads(into: &predicted)
        observations.removeAll(keepingCapacity: true)
        provisional.removeAll(keepingCapacity: true)
        for quad in predicted {
            if var o = detector.refine(quad, in: frame) {
                o.isProvisional = detector.lastRefineWasProvisional
                observations.append(o)
                provisional.append(o.isProvisional)
            }
        }
        if predicted.isEmpty || frameIndex % fullDetectionInterval == 0 {
            pendingNext.removeAll(keepingCapacity: true)
            defer { swap(&proposals, &pendingNext) }
            let refoundCount = observations.count
            for found in fullSearchOverride?(frame) ?? detector.detect(frame) {
                var same = -1
                for k in 0..<refoundCount
                where observations[k].quad.contains(found.quad.centroid) || found.quad.contains(observations[k].quad.centroid) {
                    same = k
                    break
                }
                if same < 0 {
                    observations.append(found)
                    continue
                }
                if shouldReplace(same, with: found, in: frame) {
                    observations[same] = found
                    provisional[same] = false
                }
            }
        }
        return tracker.update(observations, timestampNs: timestampNs)
    }

    /// Whether the full search's `found` outline replaces the re-found outline `observations[index]` of the same
    /// photo. The full search corrects a re-found outline that slid onto another edge; it never replaces one with
    /// the picture inside the white border the track follows, and outlines that agree stay as re-found (the search's
    /// own scatter would only add jitter). Two cases need the same correction on two full searches in a row (see
    /// `proposals`): an area change beyond `maximumAreaChange` (one search's such outline may be another shape), and a
    /// small but clear disagreement (a side on the picture's edge just inside a thin white border).
    private func shouldReplace(_ index: Int, with found: Observation, in frame: FrameBuffer) -> Bool {
        let refound = observations[index]
        // Pair the corners by the cyclic shift with the smallest total distance.
        var bestSum = Double.infinity, bestShift = 0
        for shift in 0..<4 {
            var sum = 0.0
            for i in 0..<4 {
                let d = found.quad[i + shift] - refound.quad[i]
                sum += (d * d).sum().squareRoot()
            }
            if sum < bestSum { bestSum = sum; bestShift = shift }
        }
        var offsets = Quad(.zero, .zero, .zero, .zero)
        var largestPx = 0.0
        for i in 0..<4 {
            offsets[i] = found.quad[i + bestShift] - refound.quad[i]
            largestPx = max(largestPx, (offsets[i] * offsets[i]).sum().squareRoot())
        }
        let sizePx = refound.quad.area.squareRoot()
        let areaRatio = found.quad.area / max(1e-9, refound.quad.area)
        let areaJump = areaRatio < 1 / maximumAreaChange || areaRatio > maximumAreaChange
        if !areaJump {
            if provisional[index] { return true }
            guard found.confidence >= refound.confidence,
                  !detector.isPictureInsideBorder(found.quad, of: refound.quad, in: frame) else { return false }
            if bestSum / 4 > disagreementFraction * sizePx { return true }
            guard largestPx > minimumCorrectionPx else { return false }
        } else {
            guard found.confidence >= refound.confidence else { return false }
        }
        let centre = refound.quad.centroid
        if proposals.contains(where: { $0.agrees(centre: centre, offsets: offsets, sizePx: sizePx,
                                                 tolerancePx: repeatTolerancePx) }) {
            return true
        }
        pendingNext.append(Proposal(centre: centre, offsets: offsets))
        return false
    }
}

/// A correction the full search proposed for a re-found outline: where that outline was, and how far each of its
/// corners would move. The outline moves with the camera between searches; the offsets do not.
private struct Proposal {
    var centre: PixelPoint
    var offsets: Quad

    /// Whether another proposal is for the same outline (centres within a quarter of its size) and moves every
    /// corner the same way to within `tolerancePx`.
    func agrees(centre other: PixelPoint, offsets otherOffsets: Quad, sizePx: Double, tolerancePx: Double) -> Bool {
        let c = centre - other
        guard (c * c).sum() <= 0.0625 * sizePx * sizePx else { return false }
        for i in 0..<4 {
            let d = offsets[i] - otherOffsets[i]
            if (d * d).sum() > tolerancePx * tolerancePx { return false }
        }
        return true
    }
}
