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

    public init(geometry: FrameGeometry, parameters: DetectorParameters = DetectorParameters(),
                trackerParameters: TrackerParameters = TrackerParameters(), fullDetectionInterval: Int = 3) {
        precondition(fullDetectionInterval >= 1, "fullDetectionInterval must be at least 1")
        detector = PhotoDetector(geometry: geometry, parameters: parameters)
        tracker = PhotoTracker(parameters: trackerParameters)
        self.fullDetectionInterval = fullDetectionInterval
        predicted.reserveCapacity(32)
        observations.reserveCapacity(32)
    }

    /// Processes one frame: returns the shown tracks.
    /// - Parameter timestampNs: the frame's capture time on a monotonic clock (must not decrease).
    public func process(_ frame: FrameBuffer, timestampNs: Int64) -> [Track] {
        defer { frameIndex += 1 }
        tracker.predictedQuads(into: &predicted)
        if predicted.isEmpty || frameIndex % fullDetectionInterval == 0 {
            return tracker.update(detector.detect(frame), timestampNs: timestampNs)
        }
        observations.removeAll(keepingCapacity: true)
        for quad in predicted {
            if let o = detector.refine(quad, in: frame) { observations.append(o) }
        }
        return tracker.update(observations, timestampNs: timestampNs)
    }
}
