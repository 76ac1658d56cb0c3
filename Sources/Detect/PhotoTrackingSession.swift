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
    /// A full search's outline never replaces a re-found one whose area differs by more than this factor (a white
    /// border adds up to about 1.4).
    public var maximumAreaChange = 1.45

    public init(geometry: FrameGeometry, parameters: DetectorParameters = DetectorParameters(),
                trackerParameters: TrackerParameters = TrackerParameters(), fullDetectionInterval: Int = 3) {
        precondition(fullDetectionInterval >= 1, "fullDetectionInterval must be at least 1")
        detector = PhotoDetector(geometry: geometry, parameters: parameters)
        tracker = PhotoTracker(parameters: trackerParameters)
        self.fullDetectionInterval = fullDetectionInterval
        predicted.reserveCapacity(32)
        observations.reserveCapacity(32)
        provisional.reserveCapacity(32)
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
            if let o = detector.refine(quad, in: frame) {
                observations.append(o)
                provisional.append(detector.lastRefineWasProvisional)
            }
        }
        if predicted.isEmpty || frameIndex % fullDetectionInterval == 0 {
            let refoundCount = observations.count
            for found in detector.detect(frame) {
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
                // The full search corrects the re-found outline (which may have slid onto another edge), except
                // when the search found the picture inside the white border the track follows, or the two agree.
                let refound = observations[same]
                var distancePx = Double.infinity
                for shift in 0..<4 {
                    var sum = 0.0
                    for i in 0..<4 {
                        let d = found.quad[i + shift] - refound.quad[i]
                        sum += (d * d).sum().squareRoot() / 4
                    }
                    distancePx = min(distancePx, sum)
                }
                // A photo's size changes little between full searches: an outline far larger or smaller is
                // another shape (the photo merged with the table, a detail inside it).
                let areaRatio = found.quad.area / max(1e-9, refound.quad.area)
                guard areaRatio >= 1 / maximumAreaChange, areaRatio <= maximumAreaChange else { continue }
                if provisional[same]
                    || (distancePx > disagreementFraction * refound.quad.area.squareRoot()
                        && found.confidence >= refound.confidence
                        && !detector.isPictureInsideBorder(found.quad, of: refound.quad, in: frame)) {
                    observations[same] = found
                    provisional[same] = false
                }
            }
        }
        return tracker.update(observations, timestampNs: timestampNs)
    }
}
